package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/check"
	"github.com/rewardd/rewardd/server/config"
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
	sbFlags := addSandboxFlags(fs)
	fs.Lookup("sandbox-slots").Usage = "code_exec programs run at once (default 1: check scores on one worker)"
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	name := *configPath
	if name == "" {
		name = "default.yaml (embedded)"
	}
	log, err := newLogger("warn", stderr)
	if err != nil {
		return err
	}
	code := newCodeSandbox(sbFlags, 1, nil, log)
	defer code.Close()
	cfg, err := loadConfig(*configPath, code.registry())
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
	engine := server.NewEngine(1, server.NewMetrics(prometheus.NewRegistry(), functionNames(cfg)), log)
	in := check.Input{ConfigName: name, Service: server.NewService(cfg, code.registry(), engine, log)}

	if *samples != "" {
		src := stdin
		if *samples != "-" {
			f, err := os.Open(*samples)
			if err != nil {
				return &usageError{err.Error()}
			}
			defer f.Close()
			src = f
		}
		in.SamplesName = *samples
		if in.Rows, in.Malformed, err = check.ReadSamples(src, cfg.Limits.MaxMessageBytes); err != nil {
			return fmt.Errorf("read %s: %w", *samples, err)
		}
	}

	if *addr != "" {
		if err := checkAddr(*addr, *caFile != ""); err != nil {
			return err
		}
		opts, err := dialOptions(*tokenFile, *caFile)
		if err != nil {
			return err
		}
		opts = append(opts, connectionHints(*addr, *caFile != ""))
		conn, err := grpc.NewClient(*addr, opts...)
		if err != nil {
			return &usageError{fmt.Sprintf("--addr %q: %v", *addr, err)}
		}
		defer conn.Close()
		in.Live, in.LiveAddr = conn, *addr
	}

	report, err := check.Run(ctx, in)
	if err != nil {
		return err
	}
	if *asJSON {
		err = report.WriteJSON(stdout)
	} else {
		if err = report.WriteTable(stdout); err == nil {
			_, err = fmt.Fprintf(stdout, "\n%s\n", report.Summary(*strict))
		}
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if report.Failed(*strict) {
		return fmt.Errorf("check failed: %d failure(s), %d warning(s), see the report", report.Failures, report.Warnings)
	}
	return nil
}
