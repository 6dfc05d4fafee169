package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc"

	"github.com/rewardd/rewardd/internal/cli"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/check"
	"github.com/rewardd/rewardd/server/config"
	"github.com/rewardd/rewardd/server/jsonl"
)

// runCheck validates a config before training: every function compiles;
// with --samples, every function scores the rows the same twice, without
// ERROR, with statistics and warnings; with --addr, the live server serves
// the same config and scores the samples the same.
//
// Exit status: 2 for bad usage or a config that does not load (every problem
// printed), 1 when any check fails (or, with --strict, warns), else 0.
// Warnings alone print but exit 0: a constant function may be intended.
func runCheck(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("check", stdout)
	configPath := fs.String("config", "", "config file to check (default: the embedded default config)")
	samples := fs.String("samples", "", "JSONL sample rows to score twice with every function ('-' for stdin)")
	addr := fs.String("addr", "", "host:port of a running rewardd (gRPC) to compare with the config")
	tokenFile := fs.String("auth-token-file", "", "with --addr: file holding the server's bearer token")
	caFile := fs.String("tls-ca", "", "with --addr: PEM CA bundle to verify the server's TLS certificate (enables TLS)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	strict := fs.Bool("strict", false, "fail (exit 1) on warnings too")
	sbFlags := cli.AddSandboxFlags(fs.FlagSet)
	fs.Lookup("sandbox-slots").Usage = "code_exec programs run at once (default 1: check scores on one worker)"
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	name := *configPath
	if name == "" {
		name = config.DefaultName
	}
	log, err := cli.NewLogger("warn", stderr)
	if err != nil {
		return err
	}
	code := cli.NewCodeSandbox(sbFlags, 1, nil, log)
	defer code.Close()
	cfg, err := cli.LoadConfig(*configPath, code.Registry())
	if err != nil {
		var ce config.Errors
		if *asJSON && errors.As(err, &ce) {
			if werr := check.ConfigFailed(name, ce).WriteJSON(stdout); werr != nil {
				return werr
			}
		}
		return err
	}

	// One worker: times per rollout are the cost on one core. One request
	// at a time: the check scores sequentially.
	srv, err := server.New(server.Options{Config: cfg, Kinds: code.Registry(), Workers: 1, Log: log})
	if err != nil {
		return err
	}
	in := check.Input{ConfigName: name, Service: srv.Service()}

	if *samples != "" {
		in.SamplesName = *samples
		if in.Rows, in.Malformed, err = readSamples(*samples, stdin, cfg.Limits.MaxMessageBytes); err != nil {
			return err
		}
	}
	if *addr != "" {
		conn, err := dialLive(*addr, *tokenFile, *caFile)
		if err != nil {
			return err
		}
		defer conn.Close()
		in.Live, in.LiveAddr = conn, *addr
	}

	report, err := check.Run(ctx, in)
	if err != nil {
		return err
	}
	report.Languages = check.CodeLanguages()
	return writeReport(report, *asJSON, *strict, stdout)
}

// readSamples reads the sample rows of the file name, or of stdin for "-".
func readSamples(name string, stdin io.Reader, maxLine int) ([]*jsonl.Row, []*jsonl.LineError, error) {
	src := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, cli.Usagef("%v", err)
		}
		defer f.Close()
		src = f
	}
	rows, malformed, err := check.ReadSamples(src, maxLine)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return rows, malformed, nil
}

// dialLive connects to the live server at addr, with the bearer token in
// tokenFile and TLS verified with caFile, when given.
func dialLive(addr, tokenFile, caFile string) (*grpc.ClientConn, error) {
	if err := checkAddr(addr, caFile != ""); err != nil {
		return nil, err
	}
	opts, err := cli.DialOptions(tokenFile, caFile)
	if err != nil {
		return nil, err
	}
	opts = append(opts, connectionHints(addr, caFile != ""))
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, cli.Usagef("--addr %q: %v", addr, err)
	}
	return conn, nil
}

// writeReport writes the check's report, as JSON or as a table and its
// summary, and fails when the report has failures (or, strict, warnings).
func writeReport(report *check.Report, asJSON, strict bool, stdout io.Writer) error {
	var err error
	if asJSON {
		err = report.WriteJSON(stdout)
	} else {
		if err = report.WriteTable(stdout); err == nil {
			_, err = fmt.Fprintf(stdout, "\n%s\n", report.Summary(strict))
		}
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if report.Failed(strict) {
		return fmt.Errorf("check failed: %d failure(s), %d warning(s), see the report", report.Failures, report.Warnings)
	}
	return nil
}
