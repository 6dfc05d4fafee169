package regex

import (
	"testing"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// TestRowPatternsUseGoEngine: a pattern from the config runs on RE2 where
// the build has it; a pattern a row brings never does (its RE2 program could
// hold up to 128 MiB outside the memory budget).
func TestRowPatternsUseGoEngine(t *testing.T) {
	fixed, err := New(Params{Pattern: `Step \d+:`, Mode: "count", CountTarget: new(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fixed.fixed.all.re.Fast(), rematch.HasRE2(); got != want {
		t.Errorf("config pattern on RE2: %v, want %v (engine %s)", got, want, rematch.Engine())
	}
	rows, err := New(Params{PatternField: "pattern"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rows.rows.get(`Step \d+:`)
	if err != nil {
		t.Fatal(err)
	}
	if m.find.re.Fast() {
		t.Error("a row's pattern runs on RE2")
	}
}
