package extract

import "testing"

func TestNormalizers(t *testing.T) {
	cases := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"strip", strip, " \t18\n", "18"},
		{"strip", strip, "\u00a018\u2003", "18"},
		{"lower", lower, "Paris", "paris"},
		{"lower", lower, "ÉTÉ", "été"},
		{"whitespace", whitespace, "  New \t York\n\nCity ", "New York City"},
		{"whitespace", whitespace, "a\u00a0\u2003b", "a b"},
		{"whitespace", whitespace, "a b", "a b"},
		{"whitespace", whitespace, " ", ""},
		{"whitespace", whitespace, "a\xffb  c", "a\xffb c"},
		{"punctuation", punctuation, "Hello, world!", "Hello world"},
		{"punctuation", punctuation, "«¿Qué?» — dijo…", "Qué  dijo"},
		{"punctuation", punctuation, "$5 + 3 = 8^2", "$5 + 3 = 8^2"},
		{"punctuation", punctuation, "50%", "50"},
		{"punctuation", punctuation, "a\xff.b", "a\xffb"},
		{"punctuation", punctuation, "", ""},
	}
	for _, c := range cases {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestNormalizersDoNotAllocateWhenUnchanged(t *testing.T) {
	for name, f := range map[string]func(string) string{
		"strip": strip, "lower": lower, "whitespace": whitespace, "punctuation": punctuation,
	} {
		in := "the answer is 18 apples"
		if allocs := testing.AllocsPerRun(100, func() { _ = f(in) }); allocs != 0 {
			t.Errorf("%s(%q) allocates %v times", name, in, allocs)
		}
	}
}
