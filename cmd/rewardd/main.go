// Command rewardd is the reward-scoring service for online RL of language
// models, and its command-line tools.
//
//	rewardd init    write a commented config to start from
//	rewardd serve   run the gRPC + HTTP service
//	rewardd score   score a JSONL file with the same engine
//	rewardd check   check a config, on samples and against a running server
//	rewardd version print the version
//
// The load generator is a command of its own, rewardd-bench.
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rewardd/rewardd/internal/cli"
)

// usage is `rewardd --help`. docs/cli.md's "Usage" section holds it
// verbatim, and each command's lines name exactly the flags that command
// takes (TestHelpMatchesREADME).
const usage = `rewardd — reward scoring for online RL of language models

Usage:
  rewardd init    [--force] [rewards.yml]
  rewardd serve   [--config F] [--grpc-addr 127.0.0.1:50051] [--http-addr 127.0.0.1:8080] [--workers N]
                  [--worker-nice 10] [--auth-token-file F] [--tls-cert F --tls-key F] [--log-level info] [--print-config]
                  [sandbox flags]
  rewardd score   [--config F] --in rows.jsonl|- [--out scores.jsonl] [--progress] [--workers N]
                  [--batch-size N] [sandbox flags]
  rewardd check   [--config F] [--samples rows.jsonl|-] [--addr host:port [--auth-token-file F] [--tls-ca F]]
                  [--json] [--strict] [sandbox flags]
  rewardd version
  rewardd help    [command]

Sandbox flags (code_exec functions only):
  [--sandbox-slots N] [--sandbox-python /usr/bin/python3] [--sandbox-languages L]
  [--sandbox-cache-dir D] [--unsafe-no-sandbox]

'rewardd <command> --help' describes a command's flags, which go before or
after its arguments. 'rewardd --version' is 'rewardd version'. Without
--config, the embedded default config is used; 'rewardd init' writes it,
commented, as a file to start from. The load generator is rewardd-bench
(make build puts it in bin/).

Exit status:
  0  success
  1  failure: a check failed, a row scored ERROR, a server stopped on an error
  2  bad usage, or a config that does not load
`

func main() { cli.Main("rewardd", run) }

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
		"version": runVersion,
	}
}

// commandError is an error of one command: "<command>: <err>", so that
// the message names the command once.
type commandError struct {
	command string
	err     error
}

func (e *commandError) Error() string { return e.command + ": " + e.err.Error() }

func (e *commandError) Unwrap() error { return e.err }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.Usagef("no command given")
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-version":
		name = "version"
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			fmt.Fprint(stdout, usage)
			return nil
		}
		// rewardd help <command>: that command's -h.
		name, rest = rest[0], []string{"-h"}
	case "bench":
		return cli.Usagef("bench is a command of its own now: rewardd-bench (make build puts it in bin/)")
	}
	cmd, ok := commands()[name]
	if !ok {
		return unknownCommand(name)
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
	_, err := fmt.Fprintln(stdout, readBuildInfo())
	return err
}

// unknownCommand is the error for a name that is no command: it suggests
// the nearest command, or says that flags go after the command.
func unknownCommand(name string) error {
	if strings.HasPrefix(name, "-") {
		return cli.Usagef("unknown flag %s before a command; flags go after the command ('rewardd help' lists the commands)", name)
	}
	names := []string{"help"}
	for n := range commands() {
		names = append(names, n)
	}
	slices.Sort(names) // ties go to the first in order, the same every run
	if near := cli.Nearest(name, names); near != "" {
		return cli.Usagef("unknown command %q; did you mean %q? ('rewardd help' lists the commands)", name, near)
	}
	return cli.Usagef("unknown command %q; 'rewardd help' lists the commands", name)
}
