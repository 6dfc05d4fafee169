package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"go.uber.org/zap"

	"github.com/rewardd/rewardd/internal/cli"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/jsonl"
)

// score reads rows from a JSONL file, scores them with the same service code
// the server runs (in process), and writes one JSONL output row per input
// row, in order. A malformed line is reported by line number, gets an output
// row saying why, and does not stop the others; the exit status is then 1.
func score(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("score", stdout)
	configPath := fs.String("config", "", "config file (default: the embedded default config)")
	in := fs.String("in", "", "input JSONL file, one row per line ('-' for stdin)")
	out := fs.String("out", "", "output JSONL file (default: stdout)")
	progress := fs.Bool("progress", false, "show a progress bar on stderr (default: on when stderr is a terminal and the input is over 1 MiB)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker pool size")
	sbFlags := cli.AddSandboxFlags(fs.FlagSet)
	batchSize := fs.Int("batch-size", 0, "rows per batch, rounded up to whole groups (default: the whole input, up to limits.max_rollouts); aggregation statistics are per batch")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return cli.Usagef("--in is required")
	}
	if *workers < 1 || *batchSize < 0 {
		return cli.Usagef("--workers must be at least 1 and --batch-size not negative")
	}
	log, err := cli.NewLogger("warn", stderr)
	if err != nil {
		return err
	}
	code := cli.NewCodeSandbox(sbFlags, *workers, nil, log)
	defer code.Close()
	cfg, err := cli.LoadConfig(*configPath, code.Registry())
	if err != nil {
		return err
	}
	if *batchSize == 0 || *batchSize > cfg.Limits.MaxRollouts {
		*batchSize = cfg.Limits.MaxRollouts
	}

	src, closeIn, err := openInput(*in, stdin, *progress, stderr)
	if err != nil {
		return err
	}
	defer closeIn()
	var dst io.Writer = stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		defer f.Close()
		dst = f
	}
	w := bufio.NewWriterSize(dst, 1<<16)

	srv, err := server.New(server.Options{Config: cfg, Kinds: code.Registry(), Workers: *workers, Log: log})
	if err != nil {
		return err
	}
	s := &scoreRun{svc: srv.Service(), w: w, name: *in, stderr: stderr, log: log}
	if err := s.readAll(ctx, jsonl.NewReader(src, cfg.Limits.MaxMessageBytes), *batchSize, cfg.Limits.MaxRollouts); err != nil {
		return err
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if s.bad > 0 {
		return fmt.Errorf("%s: %d malformed line(s) not scored (see the lines above and their output rows); the other %d rows were scored", *in, s.bad, s.scored)
	}
	if s.errored > 0 {
		return s.errorSummary()
	}
	return nil
}

// readAll reads the rows and scores them in batches of batchSize rows,
// rounded up to whole groups, and at most maxRollouts; the last batch is
// left pending.
func (s *scoreRun) readAll(ctx context.Context, rd *jsonl.Reader, batchSize, maxRollouts int) error {
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *jsonl.LineError
		if errors.As(err, &le) {
			s.malformed(le)
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", s.name, err)
		}
		// A batch ends at a group boundary once it is full, so that every
		// group is aggregated whole (rows of a group are expected together).
		group := groupOf(row)
		if s.rows >= batchSize && group != s.lastGroup || s.rows >= maxRollouts {
			if err := s.flush(ctx); err != nil {
				return err
			}
		}
		s.pending = append(s.pending, pendingRow{row: row})
		s.rows++
		s.lastGroup = group
	}
	return nil
}

// openInput opens the input (path, or stdin for "-"), with a progress bar
// on stderr when asked, or when stderr is a terminal and the input is over
// 1 MiB; done closes what it opened.
func openInput(path string, stdin io.Reader, progress bool, stderr io.Writer) (src io.Reader, done func(), err error) {
	src, size, closers := stdin, int64(-1), []func(){}
	done = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, done, cli.Usagef("%v", err)
		}
		closers = append(closers, func() { f.Close() })
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		src = f
	}
	if progress || size > 1<<20 && cli.IsTerminal(stderr) {
		bar := progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription("scoring"),
			progressbar.OptionThrottle(100_000_000), // redraw at most every 100 ms
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
		)
		closers = append(closers, func() { bar.Finish() })
		src = io.TeeReader(src, bar)
	}
	return src, done, nil
}

// pendingRow is an output row waiting for its batch: a row to score, or a
// malformed line's error.
type pendingRow struct {
	row *jsonl.Row
	bad *jsonl.LineError
}

type scoreRun struct {
	svc     *server.Service
	w       *bufio.Writer
	name    string
	stderr  io.Writer
	log     *zap.Logger
	pending []pendingRow
	rows    int // rows in pending
	// lastGroup is the group of the last pending row.
	lastGroup string
	bad       int
	scored    int
	batches   int
	// errored counts the rows with an ERROR entry; fnErrors the ERROR
	// entries of each function, with the first one's row and reason.
	errored  int
	fnErrors map[string]*fnErrors
}

// fnErrors is the ERROR entries of one function in a run.
type fnErrors struct {
	n          int
	line       int
	id, reason string
}

// countErrors counts the ERROR entries of the output o of row.
func (s *scoreRun) countErrors(row *jsonl.Row, o jsonl.Output) {
	errored := false
	for fn, outcome := range o.Outcomes {
		if outcome != "error" {
			continue
		}
		errored = true
		if s.fnErrors == nil {
			s.fnErrors = make(map[string]*fnErrors)
		}
		e := s.fnErrors[fn]
		if e == nil {
			e = &fnErrors{line: row.Line, id: string(row.ID), reason: o.Errors[fn]}
			s.fnErrors[fn] = e
		}
		e.n++
	}
	if errored {
		s.errored++
	}
}

// errorSummary is the error a run with ERROR entries ends with: how many
// rows, and per function how many entries and the first one's reason.
func (s *scoreRun) errorSummary() error {
	var parts []string
	for _, fn := range slices.Sorted(maps.Keys(s.fnErrors)) {
		e := s.fnErrors[fn]
		parts = append(parts, fmt.Sprintf("%s: %d, first on line %d (id %s): %s", fn, e.n, e.line, e.id, e.reason))
	}
	return fmt.Errorf("%s: %d of %d rows have an ERROR score (the verifier could not decide; their output rows say why): %s",
		s.name, s.errored, s.scored, strings.Join(parts, "; "))
}

func (s *scoreRun) malformed(le *jsonl.LineError) {
	fmt.Fprintf(s.stderr, "%s:%d: %v\n", s.name, le.Line, le.Err)
	s.pending = append(s.pending, pendingRow{bad: le})
	s.bad++
}

// flush scores the pending rows as one batch and writes every pending output
// row in input order.
func (s *scoreRun) flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	rows := make([]*jsonl.Row, 0, s.rows)
	req := &rewardv1.ScoreRequest{BatchId: fmt.Sprint(s.batches)}
	for _, p := range s.pending {
		if p.row != nil {
			rows = append(rows, p.row)
			req.Rollouts = append(req.Rollouts, p.row.Rollout)
		}
	}
	var outputs []jsonl.Output
	if len(rows) > 0 {
		resp, err := s.svc.Score(ctx, req)
		if err != nil {
			return fmt.Errorf("score rows %d to %d of %s: %w", rows[0].Line, rows[len(rows)-1].Line, s.name, err)
		}
		outputs = jsonl.Outputs(rows, resp)
		for _, w := range resp.GetWarnings() {
			fmt.Fprintf(s.stderr, "%s: rows %d to %d: warning: %s\n", s.name, rows[0].Line, rows[len(rows)-1].Line, w)
		}
	}
	enc := json.NewEncoder(s.w)
	enc.SetEscapeHTML(false)
	j := 0
	for _, p := range s.pending {
		var o jsonl.Output
		if p.bad != nil {
			o = jsonl.Output{Line: p.bad.Line, Error: p.bad.Err.Error()}
		} else {
			o = outputs[j]
			s.countErrors(rows[j], o)
			j++
		}
		if err := enc.Encode(o); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	s.scored += len(rows)
	s.batches++
	s.pending, s.rows = s.pending[:0], 0
	return nil
}

// groupOf is the row's GRPO group: its group id, or its prompt, as the
// server groups rollouts.
func groupOf(row *jsonl.Row) string {
	if g := row.Rollout.GetGroup(); g != "" {
		return g
	}
	return row.Rollout.GetPrompt()
}
