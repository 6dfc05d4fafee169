package instructions

import (
	"slices"
	"testing"
)

// TestIndentStairsLines compares indentStairsLines with the reference's
// loop done as Python does it (remove the first equal element from the
// list being iterated over, the iteration's index moving on regardless)
// on every list of up to seven lines drawn from a non-blank line and
// three different blank ones.
func TestIndentStairsLines(t *testing.T) {
	python := func(lines []string) []string {
		lines = slices.Clone(lines)
		for i := 0; i < len(lines); i++ {
			if line := lines[i]; strip(line) == "" {
				k := slices.Index(lines, line)
				lines = slices.Delete(lines, k, k+1)
			}
		}
		return lines
	}
	alphabet := []string{"x", "", " ", "\t"}
	n := 0
	var walk func(lines []string)
	walk = func(lines []string) {
		want, got := python(lines), indentStairsLines(slices.Clone(lines))
		if !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("%q: got %q, the reference's loop leaves %q", lines, got, want)
		}
		n++
		if len(lines) == 7 {
			return
		}
		for _, a := range alphabet {
			walk(append(slices.Clone(lines), a))
		}
	}
	walk(nil)
	if n < 20000 {
		t.Fatalf("checked %d lists", n)
	}
}
