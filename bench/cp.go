package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// CP is the competitive-programming code scenario: the jury's accepted C++
// and Python solutions of cp_problems.jsonl, each scored by a code_exec
// function of its language (CPConfig) with the row's checker and time
// limit, against the naive runner, which compiles a submission once and
// runs a process per test. RunCP measures C++ and then Python, in tests/s
// and CPU per test.
const CP = "cp"

// CPData is the default data of the cp scenario, relative to the
// repository root with shared/ beside it.
const CPData = "../shared/data/cp_problems.jsonl"

// CPLanguages are the languages RunCP measures, in order, and
// CPFunctions the function that scores each.
var (
	CPLanguages = []string{"cpp", "python"}
	CPFunctions = map[string]string{"cpp": "cp_cpp", "python": "cp_python"}
)

// cpFunctions are the functions of CPFunctions among asked, in the order
// of CPLanguages.
func cpFunctions(asked []string) []string {
	var fns []string
	for _, lang := range CPLanguages {
		if slices.Contains(asked, CPFunctions[lang]) {
			fns = append(fns, CPFunctions[lang])
		}
	}
	return fns
}

// CPBatchSize is the cp scenario's default batch size: a request of
// submissions that take a second each to compile and run. CPGroupSize is
// its default group size: every accepted solution once, no group.
const (
	CPBatchSize = 16
	CPGroupSize = 1
)

// CPConfig is the config of the in-process server for the cp scenario when
// none is given: per language, a code_exec function that runs every test
// of the row with the row's checker (checker, checker_files) and time limit
// (time_limit_s; 5 s per test where the row has none, as the data set's
// own check ran; twice it for Python, whose limits were set for PyPy), and
// scores the fraction that pass.
const CPConfig = `functions:
  - name: cp_cpp
    kind: code_exec
    language: cpp
    test_style: io
    checker_field: checker
    time_limit_field: time_limit_s
    time_limit_seconds: 5
    max_time_limit_seconds: 15
    scoring: fraction
    limits: {cpu_seconds: 60, wall_seconds: 120, memory_mb: 1024, output_kb: 8192}
  - name: cp_python
    kind: code_exec
    language: python
    test_style: io
    checker_field: checker
    time_limit_field: time_limit_s
    time_limit_seconds: 5
    max_time_limit_seconds: 15
    time_limit_factor: 2
    scoring: fraction
    limits: {cpu_seconds: 60, wall_seconds: 120, memory_mb: 1024, output_kb: 8192}
`

// cpProblem is a row of cp_problems.jsonl.
type cpProblem struct {
	ID           string          `json:"id"`
	Tests        json.RawMessage `json:"tests"`
	TimeLimit    *float64        `json:"time_limit_s"`
	Checker      string          `json:"checker"`
	CheckerFiles json.RawMessage `json:"checker_files"`
	Solutions    map[string][]string
	tests        int
	checkerFiles *structpb.Value // CheckerFiles, nil without
}

// cpSubmission is an accepted solution of a problem.
type cpSubmission struct {
	problem *cpProblem
	source  string
}

// readCP reads cp_problems.jsonl.
func readCP(path string) ([]*cpProblem, error) {
	var problems []*cpProblem
	err := eachLine(path, "competitive-programming", 64<<20, func(line []byte) error {
		p := new(cpProblem)
		if err := json.Unmarshal(line, p); err != nil {
			return err
		}
		var tests []json.RawMessage
		if err := json.Unmarshal(p.Tests, &tests); err != nil || len(tests) == 0 || p.Checker == "" {
			return errors.New("not a cp_problems row (want tests, a list of {stdin, stdout}, and checker)")
		}
		p.tests = len(tests)
		if len(p.CheckerFiles) > 0 && string(p.CheckerFiles) != "null" {
			var v any
			if err := json.Unmarshal(p.CheckerFiles, &v); err != nil {
				return fmt.Errorf("checker_files: %w", err)
			}
			var err error
			if p.checkerFiles, err = structpb.NewValue(v); err != nil {
				return fmt.Errorf("checker_files: %w", err)
			}
		}
		problems = append(problems, p)
		return nil
	})
	return problems, err
}

// withLanguage returns the cp scenario for the accepted solutions in
// language, in file order. With a group size G above 1, the rollouts are
// GRPO groups instead: G rollouts per problem, its accepted solutions in
// turn, so that a problem with fewer than G of them repeats programs
// within its group, as a policy's samples repeat.
func (s *scenario) withLanguage(language string) (*scenario, error) {
	c := *s
	c.lang, c.cp = language, nil
	for _, p := range s.cpProblems {
		sols := p.Solutions[language]
		if s.group > 1 && len(sols) > 0 {
			for k := range s.group {
				c.cp = append(c.cp, cpSubmission{problem: p, source: sols[k%len(sols)]})
			}
			continue
		}
		for _, src := range sols {
			c.cp = append(c.cp, cpSubmission{problem: p, source: src})
		}
	}
	if len(c.cp) == 0 {
		return nil, &OptionError{fmt.Errorf("the cp data has no %s solutions", language)}
	}
	return &c, nil
}

// cpRow returns row i: the i-th accepted solution (cycling), fenced, with
// its problem's tests, checker and time limit. The rows of a problem's
// solutions are a group.
func (s *scenario) cpRow(i int) Row {
	sub := s.cp[i%len(s.cp)]
	p := sub.problem
	return Row{
		ID: fmt.Sprintf("r%d", i), Group: p.ID, Task: p.ID, Language: s.lang,
		Completion: "```" + s.lang + "\n" + sub.source + "\n```\n",
		Tests:      string(p.Tests), Checker: p.Checker, CheckerFiles: p.CheckerFiles, TimeLimit: p.TimeLimit, tests: p.tests,
		checkerFiles: p.checkerFiles,
	}
}

// cpFields adds a cp row's fields beyond the tests: its checker (with the
// special checker's sources) and its time limit.
func cpFields(r Row, fields map[string]*structpb.Value) {
	fields["checker"] = structpb.NewStringValue(r.Checker)
	if r.checkerFiles != nil {
		fields["checker_files"] = r.checkerFiles
	}
	if r.TimeLimit != nil {
		fields["time_limit_s"] = structpb.NewNumberValue(*r.TimeLimit)
	}
}

// cpParams are what the naive runner must do as the cp function does.
type cpParams struct {
	Kind             string  `yaml:"-"`
	Language         string  `yaml:"language"`
	TestStyle        string  `yaml:"test_style"`
	TestsField       string  `yaml:"tests_field"`
	Checker          string  `yaml:"checker"`
	CheckerField     string  `yaml:"checker_field"`
	CheckerProtocol  string  `yaml:"checker_protocol"`
	TimeLimitField   string  `yaml:"time_limit_field"`
	TimeLimitSeconds float64 `yaml:"time_limit_seconds"`
	TimeLimitFactor  float64 `yaml:"time_limit_factor"`
	Scoring          string  `yaml:"scoring"`
	PrefixField      string  `yaml:"prefix_field"`
}

// checkCPFunction checks that the served function the cp point asks for
// is what the naive runner implements (code_exec in the language, io tests
// in tests, the row's checker in checker, Kattis special checkers, the
// row's time limit in time_limit_s, the fraction of tests passed, nothing
// before the program), and returns its parameters.
func (s *session) checkCPFunction(ctx context.Context, language string) (cpParams, error) {
	var p cpParams
	conn, err := s.target.dial(ctx)
	if err != nil {
		return p, err
	}
	defer conn.Close()
	lf, err := rewardv1.NewRewardServiceClient(conn).ListFunctions(ctx, &rewardv1.ListFunctionsRequest{})
	if err != nil {
		return p, fmt.Errorf("ListFunctions: %w", err)
	}
	name := s.functions[0]
	for _, info := range lf.GetFunctions() {
		if info.GetName() != name {
			continue
		}
		err := yaml.Unmarshal([]byte(info.GetParamsYaml()), &p)
		if err != nil || info.GetKind() != "code_exec" || p.Language != language || p.TestStyle != "io" ||
			p.TestsField != "" && p.TestsField != "tests" || p.CheckerField != "checker" || p.CheckerProtocol != "" && p.CheckerProtocol != "kattis" ||
			p.TimeLimitField != "time_limit_s" || p.Scoring != "fraction" || p.PrefixField != "" {
			return p, &OptionError{fmt.Errorf("the naive runner runs a %s program on each test of the row's tests with the row's checker (checker, Kattis special checkers) "+
				"and time limit (time_limit_s), and scores the fraction that pass; function %q (kind %s, %s) is not that code_exec function: "+
				"give a config with one (or run without the baseline)",
				language, name, info.GetKind(), strings.ReplaceAll(strings.TrimSpace(info.GetParamsYaml()), "\n", "; "))}
		}
		if p.TimeLimitFactor == 0 {
			p.TimeLimitFactor = 1
		}
		return p, nil
	}
	return p, &OptionError{fmt.Errorf("function %q is not served", name)}
}

// compileCheckers scores, before the clock, a trivial program of the
// language against one problem of each special checker the rows use: the
// server compiles each checker then, once, and keeps it (as it keeps them
// across a training run's steps), as the naive runner compiles each before
// its clock.
func (s *session) compileCheckers(ctx context.Context, batches []batch) error {
	trivial := map[string]string{"cpp": "int main() {}", "python": "pass"}[s.sc.lang]
	req := &rewardv1.ScoreRequest{Functions: s.functions}
	seen := map[string]bool{}
	for _, b := range batches {
		for _, r := range b.rows {
			if r.Checker != "special" || seen[r.Task] {
				continue
			}
			seen[r.Task] = true
			r.Completion = "```" + s.sc.lang + "\n" + trivial + "\n```\n"
			req.Rollouts = append(req.Rollouts, rollout(r))
		}
	}
	if len(req.Rollouts) == 0 {
		return nil
	}
	s.say("compiling the %d special checkers the rows use, before the clock …", len(req.Rollouts))
	conn, err := s.target.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := rewardv1.NewRewardServiceClient(conn).Score(ctx, req)
	if err != nil {
		return fmt.Errorf("compile the special checkers: %w", err)
	}
	// The trivial program fails the tests (an OK 0, with its reason): only
	// an ERROR says a checker did not compile.
	for _, fs := range resp.GetFunctions() {
		for i, msg := range fs.GetErrors() {
			if fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_ERROR {
				return fmt.Errorf("compile the special checkers: %s, problem %s: %s", fs.GetName(), req.Rollouts[i].GetGroup(), msg)
			}
		}
	}
	return nil
}

// CPResult is the report of the cp scenario: a run per language.
type CPResult struct {
	Runs []*Result `json:"runs"`
}

// RunCP runs the cp scenario: for each language of CPLanguages whose
// function opts.Functions asks for (both by default), the load
// of its accepted solutions on the in-process server (or opts.Addr), and
// the naive runner on the same batches. Without Requests and Duration,
// every solution is sent once.
func RunCP(ctx context.Context, opts Options) (*CPResult, error) {
	opts.Scenario = CP
	s, err := openFilled(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	all := s.sc
	res := &CPResult{}
	for _, lang := range CPLanguages {
		if !slices.Contains(opts.Functions, CPFunctions[lang]) {
			continue
		}
		sc, err := all.withLanguage(lang)
		if err != nil {
			return nil, err
		}
		s.sc, s.functions = sc, []string{CPFunctions[lang]}
		if s.py != nil {
			if s.cp, err = s.checkCPFunction(ctx, lang); err != nil {
				return nil, err
			}
		}
		if err := s.checkRunsPrograms(ctx); err != nil {
			return nil, err
		}
		o := opts
		o.Functions = s.functions
		if o.Requests == 0 && o.Duration == 0 {
			o.Requests = (len(sc.cp) + o.BatchSize - 1) / o.BatchSize
		}
		r, err := s.point(ctx, o, pointFull)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lang, err)
		}
		res.Runs = append(res.Runs, r)
	}
	return res, nil
}

// WriteText writes each language's report, then the two sides side by
// side.
func (c *CPResult) WriteText(w io.Writer) error {
	for _, r := range c.Runs {
		fmt.Fprintf(w, "== %s\n", r.Functions[0])
		if err := r.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cp\ttests\trewardd tests/s\tnaive tests/s\tratio\trewardd CPU/test\tnaive CPU/test\tratio")
	for _, r := range c.Runs {
		cr, b := r.Code, r.Baseline
		if cr == nil || b == nil || r.Ratios == nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\t-\t-\t%.1f ms\t-\t-\n", r.Functions[0], cr.Tests, num1(cr.TestsPerSecond), cr.CPUMsPerTest)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.1f ms\t%.1f ms\t%s\n", r.Functions[0], cr.Tests, num1(cr.TestsPerSecond), num1(b.TestsPerSecond),
			speed(r.Ratios.TestsPerSecond), cr.CPUMsPerTest, b.CPUMsPerTest, speed(r.Ratios.CPUPerTest))
	}
	return tw.Flush()
}

// WriteSVG is not drawn for the cp scenario: its report is two runs.
func (c *CPResult) WriteSVG(io.Writer) error {
	return fmt.Errorf("the cp scenario draws no picture: its report is a run per language (--out writes them as JSON)")
}
