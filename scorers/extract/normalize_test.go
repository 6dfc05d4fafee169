package extract

import "testing"

func TestNormalizers(t *testing.T) {
	cases := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"Strip", Strip, " \t18\n", "18"},
		{"Strip", Strip, "\u00a018\u2003", "18"},
		{"Lower", Lower, "Paris", "paris"},
		{"Lower", Lower, "ÉTÉ", "été"},
		{"Whitespace", Whitespace, "  New \t York\n\nCity ", "New York City"},
		{"Whitespace", Whitespace, "a\u00a0\u2003b", "a b"},
		{"Whitespace", Whitespace, "a b", "a b"},
		{"Whitespace", Whitespace, " ", ""},
		{"Whitespace", Whitespace, "a\xffb  c", "a\xffb c"},
		{"Punctuation", Punctuation, "Hello, world!", "Hello world"},
		{"Punctuation", Punctuation, "«¿Qué?» — dijo…", "Qué  dijo"},
		{"Punctuation", Punctuation, "$5 + 3 = 8^2", "$5 + 3 = 8^2"},
		{"Punctuation", Punctuation, "50%", "50"},
		{"Punctuation", Punctuation, "a\xff.b", "a\xffb"},
		{"Punctuation", Punctuation, "", ""},
	}
	for _, c := range cases {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestNormalizersDoNotAllocateWhenUnchanged(t *testing.T) {
	for name, f := range map[string]func(string) string{
		"Strip": Strip, "Lower": Lower, "Whitespace": Whitespace, "Punctuation": Punctuation,
	} {
		in := "the answer is 18 apples"
		if allocs := testing.AllocsPerRun(100, func() { _ = f(in) }); allocs != 0 {
			t.Errorf("%s(%q) allocates %v times", name, in, allocs)
		}
	}
}
