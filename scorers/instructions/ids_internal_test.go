package instructions

import "testing"

// TestIDSetsAreDisjoint: IFEval's, IFEvalG's and IFBench's ids are all
// different, so that none replaces another in specs, and no refused id is
// also checked.
func TestIDSetsAreDisjoint(t *testing.T) {
	seen := map[string]string{}
	for name, set := range map[string]map[string]spec{"IFEval": ifevalSpecs(), "IFEvalG": extendedSpecs(), "IFBench": ifbenchSpecs()} {
		for id := range set {
			if other, dup := seen[id]; dup {
				t.Errorf("%s is both %s's and %s's", id, other, name)
			}
			seen[id] = name
		}
	}
	for id := range unsupported {
		if _, dup := seen[id]; dup {
			t.Errorf("%s is refused and checked", id)
		}
	}
	if n := len(specs()); n != len(seen)+1 { // + letters:letter_counting2
		t.Errorf("specs has %d ids, want %d", n, len(seen)+1)
	}
}
