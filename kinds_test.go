package rewardd_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/instructions"
)

// TestDocsListEveryKind: docs/config.md names every kind the binary
// registers, in the `kind:` line's comment and in the inline kinds' default
// (all but code_exec), and each has a section of its own there; README.md's
// table of kinds has one row per kind.
func TestDocsListEveryKind(t *testing.T) {
	data, err := os.ReadFile("docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	kinds := builtin.Registry().Kinds()

	kindLine := regexp.MustCompile(`(?m)^ +kind: exact_match +# (.*)$`).FindStringSubmatch(doc)
	if kindLine == nil {
		t.Fatal("docs/config.md has no `kind: exact_match  # …` line listing the kinds")
	}
	listed := strings.Split(kindLine[1], " | ")
	slices.Sort(listed)
	if !slices.Equal(listed, kinds) {
		t.Errorf("docs/config.md's `kind:` line lists %v; the registry has %v", listed, kinds)
	}

	inlineLine := regexp.MustCompile(`(?m)^ +kinds: \[(.*)\] +# default: all but code_exec$`).FindStringSubmatch(doc)
	if inlineLine == nil {
		t.Fatal("docs/config.md has no inline `kinds: [...]   # default: all but code_exec` line")
	}
	inline := strings.Split(inlineLine[1], ", ")
	want := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == "code_exec" })
	if !slices.Equal(inline, want) {
		t.Errorf("docs/config.md's inline kinds are %v; the default is %v", inline, want)
	}

	for _, k := range kinds {
		if !strings.Contains(doc, "\n### `"+k+"`\n") {
			t.Errorf("docs/config.md has no section ### `%s`", k)
		}
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| [^|]+ \\|$").FindAllStringSubmatch(string(readme), -1) {
		rows = append(rows, m[1])
	}
	slices.Sort(rows)
	if !slices.Equal(rows, kinds) {
		t.Errorf("README.md's table of kinds has rows for %v; the registry has %v", rows, kinds)
	}
}

// TestInstructionIDsDocumented: docs/instructions.md names every
// instruction id instruction_following checks and every one it refuses,
// and no other.
func TestInstructionIDsDocumented(t *testing.T) {
	data, err := os.ReadFile("docs/instructions.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+:[a-z_0-9-]+)`").FindAllStringSubmatch(string(data), -1) {
		named[m[1]] = true
	}
	known := map[string]bool{}
	for _, id := range instructions.IDs() {
		known[id] = true
	}
	for id := range instructions.Unsupported() {
		known[id] = true
	}
	for id := range known {
		if !named[id] {
			t.Errorf("docs/instructions.md does not name %s", id)
		}
	}
	for id := range named {
		if !known[id] {
			t.Errorf("docs/instructions.md names %s, which instruction_following does not know", id)
		}
	}
}
