package cli

import (
	"context"
	"flag"
	"runtime"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// SandboxFlags are the code execution flags every command that scores shares.
type SandboxFlags struct {
	slots     *int
	python    *string
	unsafe    *bool
	languages *string
	cacheDir  *string
}

// AddSandboxFlags defines the sandbox's flags on fs.
func AddSandboxFlags(fs *flag.FlagSet) SandboxFlags {
	return SandboxFlags{
		slots:     fs.Int("sandbox-slots", 0, "code_exec programs run at once (default: --workers)"),
		python:    fs.String("sandbox-python", "/usr/bin/python3", "Python interpreter for code_exec"),
		unsafe:    fs.Bool("unsafe-no-sandbox", false, "DEVELOPMENT ONLY: run code_exec programs with no isolation at all, as this user on this host"),
		languages: fs.String("sandbox-languages", "", "code_exec languages the sandbox runs, comma-separated (default: every one whose toolchain is installed; python always)"),
		cacheDir:  fs.String("sandbox-cache-dir", "", "where the sandbox keeps what it builds once per machine (default: /var/cache/rewardd as root)"),
	}
}

// CodeSandbox starts the sandbox pool the first time a code_exec function is
// compiled, so a config without one never needs what the sandbox needs
// (root, namespaces). The command that makes it closes it.
type CodeSandbox struct {
	cfg sandbox.Config
	log *zap.Logger

	once sync.Once
	pool *sandbox.Pool
	err  error
}

// NewCodeSandbox returns the sandbox the flags describe, of --sandbox-slots
// slots (default: workers), not started yet. It probes a language other
// than python when a program first asks for it (sandbox.Config's
// ProbeOnDemand), as a command that runs its config's functions only
// wants; a server probes them all (ProbeAll).
func NewCodeSandbox(f SandboxFlags, workers int, metrics *sandbox.Metrics, log *zap.Logger) *CodeSandbox {
	slots := *f.slots
	if slots <= 0 {
		slots = workers
	}
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	cfg := sandbox.Config{Slots: slots, Python: *f.python, Unsafe: *f.unsafe, Metrics: metrics, CacheDir: *f.cacheDir,
		Failures: func(err error) { log.Warn("sandbox server failed; it is replaced", zap.Error(err)) },
		Probed: func(language string, err error) {
			if err != nil {
				log.Error("code_exec language off: its sandbox probe failed", zap.String("language", language), zap.Error(err))
				return
			}
			log.Info("code_exec language probed", zap.String("language", language))
		}}
	if *f.languages != "" {
		cfg.Languages = strings.Split(*f.languages, ",")
	}
	cfg.ProbeOnDemand = true
	return &CodeSandbox{log: log, cfg: cfg}
}

// ProbeAll makes the sandbox, when it starts, probe every language it
// runs in the background, not when a program first asks for it: a server
// runs any language a request names. It is called before Runner.
func (c *CodeSandbox) ProbeAll() { c.cfg.ProbeOnDemand = false }

// Registry is the scorer registry whose code_exec functions use this sandbox.
func (c *CodeSandbox) Registry() scorers.Registry { return builtin.WithSandbox(c.Runner) }

// Runner starts the pool the first time it is called, logging whether it
// started, and returns it.
func (c *CodeSandbox) Runner() (codeexec.Runner, error) {
	c.once.Do(func() {
		c.pool, c.err = sandbox.Start(context.Background(), c.cfg)
		switch {
		case c.err != nil:
			c.log.Error("CODE EXECUTION IS OFF: the sandbox could not start, every code_exec rollout will be scored ERROR", zap.Error(c.err))
		case c.cfg.Unsafe:
			c.log.Warn("CODE EXECUTION IS NOT SANDBOXED (--unsafe-no-sandbox): model-written programs run as this user with full access to this host and its network; never use this outside development",
				zap.Int("slots", c.pool.Slots()))
		default:
			cg, why := c.pool.Cgroups()
			fields := []zap.Field{zap.Int("slots", c.pool.Slots()), zap.String("python", c.cfg.Python), zap.Bool("cgroups", cg),
				zap.Strings("languages", c.pool.Languages()), zap.Strings("probing", c.pool.Probing())}
			if why != nil {
				fields = append(fields, zap.NamedError("cgroups_unavailable", why))
			}
			st, why := c.pool.SlotTime()
			fields = append(fields, zap.Bool("slot_time", st))
			if why != nil {
				fields = append(fields, zap.NamedError("slot_time_unavailable", why))
			}
			c.log.Info("code execution sandbox ready", fields...)
		}
	})
	if c.err != nil {
		return nil, c.err
	}
	return c.pool, nil
}

// Close stops the pool if it was started.
func (c *CodeSandbox) Close() {
	if c.pool != nil {
		c.pool.Close()
	}
}
