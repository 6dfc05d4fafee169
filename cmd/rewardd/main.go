// Command rewardd is the reward-scoring service for online RL of language
// models, and its command-line tools.
//
//	rewardd init    write a commented config to start from
//	rewardd serve   run the gRPC + HTTP service
//	rewardd score   score a JSONL file with the same engine
//	rewardd check   check a config, on samples and against a running server
//	rewardd bench   measure throughput and overload behaviour
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
	"strings"
	"syscall"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/config"
)

//go:embed default.yaml
var defaultConfig []byte

// usage is `rewardd --help`. README.md's "Command line" section holds it
// verbatim, and each command's line lists exactly the flags that command
// takes (TestHelpMatchesREADME).
const usage = `rewardd — reward scoring for online RL of language models

Usage:
  rewardd init    [--force] [rewards.yml]
  rewardd serve   [--config F] [--grpc-addr 127.0.0.1:50051] [--http-addr 127.0.0.1:8080] [--workers N]
                  [--auth-token-file F] [--tls-cert F --tls-key F] [--log-level info] [--print-config]
                  [sandbox flags]
  rewardd score   [--config F] --in rows.jsonl|- [--out scores.jsonl] [--progress] [--workers N]
                  [--batch-size N] [sandbox flags]
  rewardd check   [--config F] [--samples rows.jsonl|-] [--addr host:port [--auth-token-file F] [--tls-ca F]]
                  [--json] [--strict] [sandbox flags]
  rewardd bench   (throughput and overload measurements: bench/README.md)
  rewardd version
  rewardd help    [command]

Sandbox flags (code_exec functions only):
  [--sandbox-slots N] [--sandbox-python /usr/bin/python3] [--sandbox-languages L]
  [--sandbox-cache-dir D] [--unsafe-no-sandbox]

'rewardd <command> -h' describes a command's flags. Without --config, the
embedded default config is used; 'rewardd init' writes it, commented, as a
file to start from. Exit status: 0 success, 1 failure, 2 bad usage or config.
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

// commandError is an error of one command, printed as "rewardd <command>:
// <err>".
type commandError struct {
	command string
	err     error
}

func (e *commandError) Error() string {
	// bench's messages start with its name themselves.
	return "rewardd " + e.command + ": " + strings.TrimPrefix(e.err.Error(), e.command+": ")
}

func (e *commandError) Unwrap() error { return e.err }

// exitCode prints err once and returns the exit status: 0 success, 2 bad
// usage or bad config, 1 anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var cmdErr *commandError
	if errors.As(err, &cmdErr) {
		fmt.Fprintln(stderr, err)
	} else {
		fmt.Fprintln(stderr, "rewardd:", err)
	}
	var ue *usageError
	var ce config.Errors
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return 2
	}
	return 1
}

// command runs one subcommand with the arguments after its name.
type command func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

func commands() map[string]command {
	return map[string]command{
		"init": runInit,
		"serve": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			return serve(ctx, args, stdout, stderr)
		},
		"score":   score,
		"check":   runCheck,
		"bench":   runBench,
		"version": runVersion,
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &usageError{"no command given"}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			fmt.Fprint(stdout, usage)
			return nil
		}
		// rewardd help <command>: that command's -h.
		name, rest = rest[0], []string{"-h"}
	}
	cmd, ok := commands()[name]
	if !ok {
		return &usageError{fmt.Sprintf("unknown command %q; 'rewardd help' lists the commands", name)}
	}
	if err := cmd(ctx, rest, stdin, stdout, stderr); err != nil {
		return &commandError{command: name, err: err}
	}
	return nil
}

func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := newFlags("version", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, version())
	return err
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

// flagSet is a command's flags; -h writes its help to help.
type flagSet struct {
	*flag.FlagSet
	help io.Writer
}

// newFlags returns a flag set whose errors are returned, not printed.
func newFlags(name string, help io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, help: help}
}

// parseFlags parses args and refuses positional arguments.
func parseFlags(fs *flagSet, args []string) error {
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// parseFlagsOnly parses args, leaving positional arguments in fs.Args().
// On -h it prints the command's help and returns flag.ErrHelp.
func parseFlagsOnly(fs *flagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs.help, fs.FlagSet)
		return err
	default:
		return &usageError{fmt.Sprintf("%v (-h lists the flags)", err)}
	}
}

// printHelp writes a command's lines of usage and its flags, as
// "--name ARG" with their meaning and default.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n%s\n", synopsis(fs.Name()))
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n++; n == 1 {
			fmt.Fprintf(w, "\nFlags:\n")
		}
		arg, meaning := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s", f.Name, arg, meaning)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// synopsis is the command's lines of usage, continuations included.
func synopsis(name string) string {
	var lines []string
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  rewardd "+name+" ") || line == "  rewardd "+name:
			lines = append(lines, line)
		case len(lines) > 0 && strings.HasPrefix(line, "    "):
			lines = append(lines, line)
		case len(lines) > 0:
			return strings.Join(lines, "\n")
		}
	}
	return strings.Join(lines, "\n")
}
