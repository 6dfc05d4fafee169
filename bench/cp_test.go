package bench

import (
	"strings"
	"testing"
)

// TestCPGroups: by default the cp rows are the accepted solutions once
// each, in file order; with a group size G they are G rollouts per
// problem, its solutions in turn, each group the problem's.
func TestCPGroups(t *testing.T) {
	problems := []*cpProblem{
		{ID: "p", Solutions: map[string][]string{"cpp": {"a", "b", "c"}}},
		{ID: "q", Solutions: map[string][]string{"cpp": {"d"}, "python": {"e"}}},
	}
	for _, c := range []struct {
		group int
		want  string // group/program of each row
	}{
		{1, "p/a p/b p/c q/d"},
		{4, "p/a p/b p/c p/a q/d q/d q/d q/d"},
	} {
		sc, err := (&scenario{name: CP, cpProblems: problems, group: c.group}).withLanguage("cpp")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range sc.rows(0, len(sc.cp)) {
			program := strings.TrimSuffix(strings.TrimPrefix(r.Completion, "```cpp\n"), "\n```\n")
			got = append(got, r.Group+"/"+program)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("group size %d: rows %v, want %s", c.group, got, c.want)
		}
	}
}

// TestCPFunctions: the cp scenario runs the languages whose functions are
// asked for, in CPLanguages' order, and nothing else.
func TestCPFunctions(t *testing.T) {
	for _, c := range []struct {
		functions []string
		ok        bool
	}{
		{[]string{"cp_cpp", "cp_python"}, true},
		{[]string{"cp_cpp"}, true},
		{[]string{"cp_python"}, true},
		{[]string{"cp_python", "cp_cpp"}, false},
		{[]string{"cp_cpp", "accuracy"}, false},
		{[]string{"cp_cpp", "cp_cpp"}, false},
	} {
		o := Options{Scenario: CP, Functions: c.functions}
		if err := o.checkFunctions(); (err == nil) != c.ok {
			t.Errorf("functions %v: error %v, want ok %v", c.functions, err, c.ok)
		}
	}
}
