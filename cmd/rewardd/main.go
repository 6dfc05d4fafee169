// Command rewardd is the reward-scoring service for online RL of language
// models, and its command-line tools.
//
//	rewardd serve   run the gRPC + HTTP service
//	rewardd score   score a JSONL file with the same engine
//	rewardd version print the version
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/config"
)

//go:embed default.yaml
var defaultConfig []byte

const usage = `rewardd — reward scoring for online RL of language models

Usage:
  rewardd serve   [--config F] [--grpc-addr A] [--http-addr A] [--workers N] [--log-level L]
  rewardd score   [--config F] --in rows.jsonl [--out scores.jsonl] [--progress]
  rewardd check   [--config F] [--samples rows.jsonl] [--addr host:port] [--json] [--strict]
  rewardd bench   [--scenario gsm8k|mixed|humaneval|stdio] [--batch-size N] [--clients N] [--duration D | --requests N] [--sweep batch|length|clients] [--out F] [--svg F]
  rewardd bench   --attack unauth|memory|streams|large|slow|idle|similarity --addr A --http-addr A [--server-pid P] [--memory-budget S] [--duration D]
  rewardd version

Run 'rewardd <command> -h' for a command's flags. Without --config, the
embedded default config is used (see 'rewardd serve -print-config').
`

// gcPercent is the garbage collector's target unless GOGC is set. A Score
// call's memory dies with its answer, and once the request, the rollouts,
// the results and the response were all allocated afresh per call (~1.5 KiB
// per rollout), Go's default of 100 ran the collector every few dozen
// 1,024-rollout requests: 400 cut the CPU per rollout by 25-30% then. With
// that memory reused from call to call (~140 B per rollout left), 200 costs
// nothing measurable against 400 at 1,024 rollouts per request (four
// alternating pairs, 4 clients x 3 functions: 1.48-1.65 M against
// 1.46-1.68 M rollouts/s) for a third less peak RSS (95 against 144 MiB),
// and at 16,384 per request, where the heap grows to 5x the live data at
// 400 and every new page is a fault, it costs 2-6% less CPU per rollout
// with 0.7 GiB of peak RSS against 1.1 GiB. 100 cost 3-4% of the
// throughput at 1,024 (two pairs against 400). GOMEMLIMIT, which deploy/ sets below the container's
// memory limit, still bounds the heap.
const gcPercent = 200

func main() {
	// The code_exec sandbox re-executes this binary to confine itself
	// before it becomes the Python fork server.
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// exitCode prints err once and returns the exit status: 0 success, 2 bad
// usage or bad config, 1 anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "rewardd:", err)
	var ue *usageError
	var ce config.Errors
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return 2
	}
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{"no command given"}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest, stdout, stderr)
	case "score":
		return score(ctx, rest, stdin, stdout, stderr)
	case "check":
		return runCheck(ctx, rest, stdin, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version())
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return &usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
}

// loadConfig reads the config file at path, or the embedded default when path
// is empty.
func loadConfig(path string, reg scorers.Registry) (*config.Config, error) {
	name, data := "default.yaml (embedded)", defaultConfig
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, &usageError{fmt.Sprintf("read config: %v", err)}
		}
		name = path
	}
	return config.Load(name, data, reg)
}

// newFlags returns a flag set whose errors are returned, not printed-and-exit.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rewardd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and refuses positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
