// Command rewardd is the reward-scoring service for online RL of language
// models, and its command-line tools.
//
//	rewardd serve   run the gRPC + HTTP service
//	rewardd score   score a JSONL file with the same engine
//	rewardd check   check a config (and samples, and a live server)
//	rewardd version print the version
//
// The load generator is a command of its own, rewardd-bench.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rewardd/rewardd/internal/cli"
)

const usage = `rewardd — reward scoring for online RL of language models

Usage:
  rewardd serve   [--config F] [--grpc-addr A] [--http-addr A] [--workers N] [--log-level L]
  rewardd score   [--config F] --in rows.jsonl [--out scores.jsonl] [--progress]
  rewardd check   [--config F] [--samples rows.jsonl] [--addr host:port] [--json] [--strict]
  rewardd version

Run 'rewardd <command> -h' for a command's flags. Without --config, the
embedded default config is used (see 'rewardd serve -print-config').
The load generator is rewardd-bench (make build puts it in bin/).
`

func main() { cli.Main("rewardd", run) }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.Usagef("no command given")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest, stdout, stderr)
	case "score":
		return score(ctx, rest, stdin, stdout, stderr)
	case "check":
		return runCheck(ctx, rest, stdin, stdout, stderr)
	case "bench":
		return cli.Usagef("bench is a command of its own now: rewardd-bench (make build puts it in bin/)")
	case "version":
		fmt.Fprintln(stdout, version())
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return cli.Usagef("unknown command %q", cmd)
	}
}
