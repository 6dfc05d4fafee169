package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Stdio is the io-style code scenario: small programs that read stdin and
// print, each with a suite of StdioTests cases, scored by a code_exec
// function with test_style io (StdioConfig), against the naive runner that
// starts one interpreter per test case. It measures tests/s as well as
// submissions/s.
const Stdio = "stdio"

// StdioTests is the number of test cases of every stdio submission.
const StdioTests = 12

// StdioFunctions are the functions the stdio scenario asks for by default.
var StdioFunctions = []string{"io_tests"}

// StdioConfig is the config of the in-process server for the stdio scenario
// when none is given: one code_exec function that runs the program once per
// case of the row's tests and scores the fraction whose output matches.
const StdioConfig = `functions:
  - name: io_tests
    kind: code_exec
    test_style: io
    scoring: fraction
`

// stdioProgram is one problem of the stdio scenario: a right program, a
// wrong one that fails only on some inputs (with a negative number, an odd
// count, the largest number first), and the answer the right one prints.
type stdioProgram struct {
	name, right, wrong string
	answer             func(nums []int) string
}

var stdioPrograms = []stdioProgram{
	{"sum",
		"import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n",
		"import sys\nprint(sum(abs(int(x)) for x in sys.stdin.read().split()))\n",
		func(nums []int) string {
			s := 0
			for _, n := range nums {
				s += n
			}
			return strconv.Itoa(s)
		}},
	{"max",
		"import sys\nprint(max(int(x) for x in sys.stdin.read().split()))\n",
		"import sys\nnums = [int(x) for x in sys.stdin.read().split()]\nprint(max(nums[1:] or nums))\n",
		func(nums []int) string { return strconv.Itoa(slices.Max(nums)) }},
	{"sort",
		"nums = sorted(int(x) for x in input().split())\nprint(*nums)\n",
		"nums = sorted(int(x) for x in input().split())\nprint(*[n for n in nums if n >= 0] or nums)\n",
		func(nums []int) string {
			s := slices.Clone(nums)
			slices.Sort(s)
			return joinInts(s, " ")
		}},
	{"prefix sums",
		"import itertools\nfor s in itertools.accumulate(int(x) for x in input().split()):\n    print(s)\n",
		"import itertools\nnums = [int(x) for x in input().split()]\nfor s in itertools.accumulate(nums[:len(nums) // 2 * 2]):\n    print(s)\n",
		func(nums []int) string {
			out := make([]int, len(nums))
			s := 0
			for i, n := range nums {
				s += n
				out[i] = s
			}
			return joinInts(out, "\n")
		}},
}

func joinInts(nums []int, sep string) string {
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, sep)
}

// stdioRow returns row i of group g: the program of the group's problem, in
// a fenced block, and its StdioTests cases (the same for the whole group,
// as a GRPO group shares a problem) as JSON in the field tests.
func (s *scenario) stdioRow(i, g int) Row {
	p := stdioPrograms[g%len(stdioPrograms)]
	type ioCase struct {
		Stdin  string `json:"stdin"`
		Stdout string `json:"stdout"`
	}
	cases := make([]ioCase, StdioTests)
	for k := range cases {
		n := 1 + int(s.uniform(g*StdioTests+k, 5)*12)
		nums := make([]int, n)
		negative := k%2 == 1 // half the cases have negative numbers
		for j := range nums {
			nums[j] = int(s.uniform(g*StdioTests+k, uint64(10+j))*1000) - 1
			if !negative && nums[j] < 0 {
				nums[j] = 0
			}
			if negative && j == n/2 {
				nums[j] = -1 - nums[j]
			}
		}
		cases[k] = ioCase{Stdin: joinInts(nums, " ") + "\n", Stdout: p.answer(nums) + "\n"}
	}
	tests, _ := json.Marshal(cases)
	r := Row{
		ID: fmt.Sprintf("r%d", i), Group: fmt.Sprintf("g%d", g), Prompt: "Write a program: " + p.name + " of the integers on stdin.",
		Task: fmt.Sprintf("stdio/%s/%d", p.name, g), Tests: string(tests), Wrong: s.uniform(i, 1) < s.wrong, tests: StdioTests,
	}
	prog := p.right
	if r.Wrong {
		prog = p.wrong
	}
	r.Completion = "```python\n" + prog + "```"
	return r
}
