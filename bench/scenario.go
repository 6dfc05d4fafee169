package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Scenarios.
const (
	// GSM8K scores GSM8K gold solutions as written ("… #### 18"), a share
	// of them with the final number changed, with the string functions of
	// the server's config.
	GSM8K = "gsm8k"
	// Mixed is GSM8K in the formats models write (think/answer tags,
	// \boxed{}, "Step n:" lists, a bare final number, truncated or answerless
	// text) and at varied lengths, from 60 bytes to 32 KiB.
	Mixed = "mixed"
	// HumanEval runs HumanEval's canonical solutions, a share of them with
	// the body replaced by `return None`, with a code_exec function
	// (HumanEvalConfig), against the naive subprocess runner.
	HumanEval = "humaneval"
)

// Row is one rollout of a scenario, in the JSONL shape of `rewardd score`:
// id, group, prompt and completion, and the reference in the field answer.
type Row struct {
	ID         string `json:"id"`
	Group      string `json:"group"`
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
	// Answer is the GSM8K gold solution, whose last line is "#### n" (the
	// embedded default config reads it with reference_extract [gsm8k, none]).
	Answer string `json:"answer,omitempty"`
	// Task names a code row's problem (HumanEval's task id).
	Task string `json:"task_id,omitempty"`
	// Test and EntryPoint are HumanEval's test code (defining
	// check(candidate)) and the name of the function it checks.
	Test       string `json:"test,omitempty"`
	EntryPoint string `json:"entry_point,omitempty"`
	// Tests are the io test cases of a stdio or cp row, as JSON: [{stdin,
	// stdout}].
	Tests string `json:"tests,omitempty"`
	// Language is a cp row's program's language; Checker, CheckerFiles and
	// TimeLimit are its problem's (cp_problems.jsonl's checker,
	// checker_files and time_limit_s).
	Language     string          `json:"language,omitempty"`
	Checker      string          `json:"checker,omitempty"`
	CheckerFiles json.RawMessage `json:"checker_files,omitempty"`
	TimeLimit    *float64        `json:"time_limit_s,omitempty"`
	// Wrong marks a completion whose final answer was changed.
	Wrong bool `json:"-"`
	// tests is how many tests a code row's program runs; checkerFiles is
	// CheckerFiles as a row field.
	tests        int
	checkerFiles *structpb.Value
}

// problem is one GSM8K test problem.
type problem struct {
	question string
	solution string // the gold solution, ending in "#### n"
	steps    string // the solution without its "#### n" line
	final    string // n
}

// isCode says whether a scenario's rollouts are programs, scored by a
// code_exec function against the naive runner.
func isCode(scenario string) bool {
	return scenario == HumanEval || scenario == Stdio || scenario == CP
}

// task is one HumanEval problem.
type task struct {
	id, prompt, solution, test, entry string
}

// scenario generates the rows of a benchmark deterministically: row i is the
// same for the same options, so the load generator and the Python baseline
// score the same text.
type scenario struct {
	name     string
	problems []problem
	tasks    []task // HumanEval
	// cpProblems are the cp scenario's problems, and cp the accepted
	// solutions in lang that its rows are.
	cpProblems []*cpProblem
	cp         []cpSubmission
	lang       string
	group      int
	wrong      float64
	length     int // 0: as generated
	seed       uint64
	// filler is reasoning text of every problem, used to pad completions.
	filler string
}

func newScenario(opts *Options) (*scenario, error) {
	switch opts.Scenario {
	case GSM8K, Mixed, Long:
	case Stdio:
		return &scenario{name: opts.Scenario, group: opts.GroupSize, wrong: opts.Wrong, seed: opts.Seed}, nil
	case HumanEval:
		tasks, err := readHumanEval(opts.Data)
		if err != nil {
			return nil, &OptionError{err}
		}
		return &scenario{name: opts.Scenario, tasks: tasks, group: opts.GroupSize, wrong: opts.Wrong, seed: opts.Seed}, nil
	case CP:
		problems, err := readCP(opts.Data)
		if err != nil {
			return nil, &OptionError{err}
		}
		return &scenario{name: opts.Scenario, cpProblems: problems, group: opts.GroupSize, seed: opts.Seed}, nil
	default:
		return nil, &OptionError{fmt.Errorf("unknown scenario %q (one of %s, %s, %s, %s, %s, %s)", opts.Scenario, GSM8K, Mixed, Long, HumanEval, Stdio, CP)}
	}
	problems, err := readGSM8K(opts.Data)
	if err != nil {
		return nil, &OptionError{err}
	}
	var filler strings.Builder
	for _, p := range problems {
		filler.WriteString(p.steps)
		filler.WriteByte('\n')
	}
	return &scenario{
		name: opts.Scenario, problems: problems, group: opts.GroupSize, wrong: opts.Wrong,
		length: opts.CompletionLength, seed: opts.Seed, filler: filler.String(),
	}, nil
}

// readGSM8K reads GSM8K's test.jsonl ({"question", "answer"} per line).
func readGSM8K(path string) ([]problem, error) {
	var problems []problem
	err := eachLine(path, "GSM8K", 1<<20, func(line []byte) error {
		var r struct{ Question, Answer string }
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		i := strings.LastIndex(r.Answer, "####")
		if i < 0 {
			return errors.New("the answer has no \"#### n\" line")
		}
		problems = append(problems, problem{
			question: r.Question, solution: r.Answer,
			steps: strings.TrimSpace(r.Answer[:i]), final: strings.TrimSpace(r.Answer[i+len("####"):]),
		})
		return nil
	})
	return problems, err
}

// readHumanEval reads HumanEval's JSONL (task_id, prompt,
// canonical_solution, test, entry_point per line).
func readHumanEval(path string) ([]task, error) {
	var tasks []task
	err := eachLine(path, "HumanEval", 1<<20, func(line []byte) error {
		var r struct {
			TaskID            string `json:"task_id"`
			Prompt            string `json:"prompt"`
			CanonicalSolution string `json:"canonical_solution"`
			Test              string `json:"test"`
			EntryPoint        string `json:"entry_point"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.Prompt == "" || r.CanonicalSolution == "" || r.Test == "" || r.EntryPoint == "" {
			return errors.New("not a HumanEval row (want prompt, canonical_solution, test and entry_point)")
		}
		tasks = append(tasks, task{id: r.TaskID, prompt: r.Prompt, solution: r.CanonicalSolution, test: r.Test, entry: r.EntryPoint})
		return nil
	})
	return tasks, err
}

// eachLine calls fn with each line of the JSON Lines file at path that is
// not blank, lines up to maxLine bytes long. An error names what the data
// is, the path and, for fn's, the line; a file without a row is an error.
func eachLine(path, what string, maxLine int, fn func(line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s data: %w", what, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	rows := 0
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if rows == 0 {
		return fmt.Errorf("%s: no %s rows", path, what)
	}
	return nil
}

// rows returns rows [from, from+n).
func (s *scenario) rows(from, n int) []Row {
	out := make([]Row, n)
	for i := range out {
		out[i] = s.row(from + i)
	}
	return out
}

// row returns row i. Rows come in groups of s.group completions of one
// problem, as a GRPO trainer sends them.
func (s *scenario) row(i int) Row {
	g := i / s.group
	switch s.name {
	case HumanEval:
		return s.humanEval(i, g)
	case Stdio:
		return s.stdioRow(i, g)
	case CP:
		return s.cpRow(i)
	}
	p := s.problems[g%len(s.problems)]
	r := Row{
		ID:     fmt.Sprintf("r%d", i),
		Group:  fmt.Sprintf("g%d", g),
		Prompt: p.question,
		Answer: p.solution,
		Wrong:  s.uniform(i, 1) < s.wrong,
	}
	final := p.final
	if r.Wrong {
		final = perturb(final, i)
	}
	switch s.name {
	case Mixed:
		r.Completion = s.mixed(i, p, final)
	case Long:
		return withCompletion(r, s.long(i, p, final)) // at s.length already
	default:
		r.Completion = p.steps + "\n#### " + final
	}
	if s.length > 0 {
		r.Completion = s.fit(r.Completion, s.length, i)
	}
	return r
}

func withCompletion(r Row, c string) Row {
	r.Completion = c
	return r
}

// meanLength estimates the mean completion length of the rows, for sizing
// the batches prepared.
func (s *scenario) meanLength() int {
	switch {
	case s.length > 0:
		return s.length
	case s.name == Long:
		return int(float64(longMax-longMin) / math.Log(float64(longMax)/longMin))
	case s.name == Mixed:
		return 3 << 10
	}
	return 300
}

// humanEval returns row i of group g: the problem's prompt and canonical
// solution in a fenced block, as a model that continues the prompt and
// writes out the whole function answers; a wrong row has the body replaced
// by `return None` (the signature and docstring stay).
func (s *scenario) humanEval(i, g int) Row {
	t := s.tasks[g%len(s.tasks)]
	r := Row{
		ID: fmt.Sprintf("r%d", i), Group: fmt.Sprintf("g%d", g), Prompt: t.prompt,
		Task: t.id, Test: t.test, EntryPoint: t.entry, Wrong: s.uniform(i, 1) < s.wrong, tests: 1,
	}
	body := t.solution
	if r.Wrong {
		body = wrongBody
	}
	r.Completion = "```python\n" + t.prompt + body + "```"
	return r
}

// wrongBody replaces a canonical solution's body in a wrong HumanEval row.
const wrongBody = "    return None\n"

// Mixed formats, with their share of rows (out of 100) and lengths.
var mixedFormats = []struct {
	share  int
	render func(steps, final string) string
}{
	{30, func(steps, final string) string { return steps + "\n#### " + final }},
	{25, func(steps, final string) string {
		return "<think>\n" + steps + "\n</think>\n<answer>\n" + final + "\n</answer>"
	}},
	{10, func(steps, final string) string { return steps + "\nSo the answer is $\\boxed{" + final + "}$." }},
	{10, func(steps, final string) string {
		var b strings.Builder
		for n, line := range strings.Split(steps, "\n") {
			fmt.Fprintf(&b, "Step %d: %s\n", n+1, line)
		}
		return b.String() + "#### " + final
	}},
	{10, func(steps, final string) string { return steps + "\nThe answer is " + final + "." }},
	{5, func(steps, final string) string {
		return "<think>\n" + steps + "\n</think>\nThe answer is " + final + "."
	}},
	{5, func(steps, _ string) string { return steps[:len(steps)/2] }}, // truncated: no final answer
	{5, func(string, string) string { return "I am not sure how to solve this." }},
}

// mixedLengths are the lengths mixed rows are padded to, with their share.
var mixedLengths = []struct{ share, bytes int }{
	{70, 0}, {15, 2 << 10}, {10, 8 << 10}, {5, 32 << 10},
}

func (s *scenario) mixed(i int, p problem, final string) string {
	steps := strings.ToValidUTF8(p.steps, "")
	c := ""
	pick, acc := int(s.uniform(i, 2)*100), 0
	for _, f := range mixedFormats {
		if acc += f.share; pick < acc {
			c = strings.ToValidUTF8(f.render(steps, final), "")
			break
		}
	}
	if s.length == 0 {
		pick, acc = int(s.uniform(i, 3)*100), 0
		for _, l := range mixedLengths {
			if acc += l.share; pick < acc {
				if l.bytes > len(c) {
					c = s.fit(c, l.bytes, i)
				}
				break
			}
		}
	}
	return c
}

// fit pads or trims c to exactly n bytes of valid UTF-8. Padding is GSM8K
// reasoning text from other problems, inserted at the start (inside
// <think> when c starts with it) so that the final answer and the format
// stay as they were. Trimming keeps the end, where the answer is.
func (s *scenario) fit(c string, n, i int) string {
	if len(c) >= n {
		cut := len(c) - n
		for cut < len(c) && !utf8.RuneStart(c[cut]) {
			cut++
		}
		return strings.Repeat(" ", n-(len(c)-cut)) + c[cut:]
	}
	head, rest := "", c
	if strings.HasPrefix(c, "<think>\n") {
		head, rest = "<think>\n", c[len("<think>\n"):]
	}
	need := n - len(c)
	var b strings.Builder
	b.Grow(n)
	b.WriteString(head)
	start := int(s.uniform(i, 4) * float64(len(s.filler)))
	for need > 0 {
		for start < len(s.filler) && !utf8.RuneStart(s.filler[start]) {
			start++
		}
		if start >= len(s.filler) {
			start = 0
		}
		chunk := s.filler[start:min(len(s.filler), start+need)]
		for len(chunk) > 0 && !utf8.ValidString(chunk) {
			chunk = chunk[:len(chunk)-1] // a rune cut at the end
		}
		if len(chunk) == 0 {
			b.WriteString(strings.Repeat(" ", need))
			break
		}
		b.WriteString(chunk)
		need -= len(chunk)
		start += len(chunk)
	}
	b.WriteString(rest)
	return b.String()
}

// uniform returns a number in [0, 1) that depends only on the seed, the row
// and the purpose k (splitmix64).
func (s *scenario) uniform(i int, k uint64) float64 {
	z := s.seed + uint64(i)*0x9e3779b97f4a7c15 + k*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// perturb returns a different final answer: the number plus 1 to 9.
func perturb(final string, i int) string {
	n, err := strconv.ParseInt(strings.ReplaceAll(final, ",", ""), 10, 64)
	if err != nil {
		return final + "7"
	}
	return strconv.FormatInt(n+1+int64(i%9), 10)
}
