package codeexec

import (
	"math"
	"testing"
)

// TestCheckers: each built-in checker as the data sets write them.
func TestCheckers(t *testing.T) {
	for _, c := range []struct {
		spec, got, want string
		same            bool
	}{
		{"exact", "1 2\n3\n", "1 2\n3", true},
		{"exact", "1 2  \r\n3\n\n\n", "1 2\n3\n", true},
		{"exact", "1  2\n3\n", "1 2\n3\n", false}, // inner white space counts
		{"exact", "1 2\n", "1 2\n3\n", false},
		{"exact", "Yes\n", "YES\n", false},
		{"exact_ci", "Yes\n", "YES\n", true},
		{"exact_ci", "yes no\n", "YES\n", false},
		{"exact_ci", "YeS nO\n", "yes NO\n", true},
		// ASCII letters only, as judges fold case: Unicode's folds do
		// not count.
		{"exact_ci", "\u212A\n", "k\n", false}, // KELVIN SIGN
		{"exact_ci", "\u212A\n", "K\n", false},
		{"exact_ci", "\u017F\n", "s\n", false}, // LATIN SMALL LETTER LONG S
		{"exact_ci", "\u017F\n", "S\n", false},
		{"exact_ci", "\u0131\n", "I\n", false}, // dotless ı
		{"exact_ci", "\u0131\n", "i\n", false},
		{"exact_ci", "\u0130\n", "i\n", false},                    // dotted İ
		{"exact_ci", "\u00C9T\u00C9\n", "\u00E9t\u00E9\n", false}, // ÉTÉ, été
		{"exact_ci", "\u00C9t\u00C9\n", "\u00C9T\u00C9\n", true},  // the same non-ASCII bytes
		{"exact_ci", "\u03A3\n", "\u03C3\n", false},               // Σ, σ
		{"float:1e-6", "0.3333333\n", "0.333333333333\n", true},
		{"float:1e-6", "1000000.5\n", "1000000.0\n", true}, // relative error 5e-7
		{"float:1e-6", "0.3334\n", "0.3333333\n", false},
		{"float:1e-6", "2 0.5000001 x\n", "2\n0.5\nx\n", true}, // tokens, not lines
		{"float:1e-6", "2 0.5 y\n", "2 0.5 x\n", false},
		{"float:1e-6", "2 0.5\n", "2 0.5 x\n", false},
		{"float:1e-6", "nan\n", "0.5\n", false},
		{"float:1e-6", "inf\n", "1e308\n", false},
		{"float:1e-6", "0x1p-1\n", "0.5\n", false}, // hex is not a decimal number
		{"float:1e-6", "1e999\n", "1e999\n", true}, // the same token
		{"float_abs:1e-3", "1000.0009\n", "1000\n", true},
		{"float_abs:1e-3", "1000.01\n", "1000\n", false},
		{"float_rel:1e-5", "1000.001\n", "1000\n", true},
		{"float_rel:1e-5", "0.00001\n", "0\n", false}, // relative to 0: nothing but 0
		{"float_rel:1e-5", "0\n", "0.0\n", true},
	} {
		ch, err := parseChecker(c.spec)
		if err != nil {
			t.Fatalf("%q: %v", c.spec, err)
		}
		if got := ch.same([]byte(c.got), c.want); got != c.same {
			t.Errorf("%s: %q against %q: %v, want %v", c.spec, c.got, c.want, got, c.same)
		}
	}
	for _, bad := range []string{"", "exact:1", "float", "float:x", "float:-1", "float:inf", "float:NaN", "diff", "special:1"} {
		if _, err := parseChecker(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// FuzzChecker: parsing a spec and comparing outputs never panic; a float
// checker accepts an output equal to the expected one, and agrees with
// itself when the two are swapped and the tolerance is absolute.
func FuzzChecker(f *testing.F) {
	f.Add("float:1e-6", "1 2.5\n", "1 2.5000001")
	f.Add("exact_ci", "A\n", "a")
	f.Add("float_rel:0.1", "-0", "+0e5")
	f.Fuzz(func(t *testing.T, spec, got, want string) {
		c, err := parseChecker(spec)
		if err != nil || c.kind == special {
			return
		}
		c.same([]byte(got), want)
		if !c.same([]byte(want), want) {
			t.Fatalf("%s: %q is not the same as itself", spec, want)
		}
		if c.kind == floatTokens && c.abs && !c.rel && !math.IsNaN(c.tol) {
			if c.same([]byte(got), want) != c.same([]byte(want), got) {
				t.Fatalf("%s: %q and %q compare differently when swapped", spec, got, want)
			}
		}
	})
}
