package extract

import (
	"math"
	"testing"
)

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in    string
		want  float64
		isInt bool
	}{
		{"18", 18, true},
		{" 18 ", 18, true},
		{"18.", 18, true},
		{"18.0", 18, false},
		{"007", 7, true},
		{"0", 0, true},
		{"-0", 0, true},
		{"+7", 7, true},
		{"-2", -2, true},
		{"1,234", 1234, true},
		{"1,234,567", 1234567, true},
		{"1,234.50", 1234.5, false},
		{"$5", 5, true},
		{`\$5`, 5, true},
		{"-$5", -5, true},
		{"$-5", -5, true},
		{"$1,000.25", 1000.25, false},
		{"50%", 50, true},
		{`50\%`, 50, true},
		{"12.5%", 12.5, false},
		{"3/4", 0.75, false},
		{"-3/4", -0.75, false},
		{"1,000/4", 250, false},
		{"1.5/3", 0.5, false},
		{`\frac{3}{4}`, 0.75, false},
		{`-\dfrac{1}{2}`, -0.5, false},
		{`\tfrac{1}{8}`, 0.125, false},
		{"1e-3", 0.001, false},
		{"2.5E+6", 2.5e6, false},
		{".5", 0.5, false},
		{"-.5", -0.5, false},
		{"123456789012345678901234567890", 1.2345678901234568e29, true},
		{"18446744073709551615", 18446744073709551615, true},
	}
	for _, c := range cases {
		n, ok := ParseNumber(c.in)
		if !ok {
			t.Errorf("ParseNumber(%q) failed", c.in)
			continue
		}
		if n.Float64() != c.want || n.IsInt() != c.isInt {
			t.Errorf("ParseNumber(%q) = %v (int %v), want %v (int %v)", c.in, n.Float64(), n.IsInt(), c.want, c.isInt)
		}
	}
}

func TestParseNumberRejects(t *testing.T) {
	for _, in := range []string{
		"", " ", "-", "+", "$", "%", ".", "-.", "e5", "1e", "1e+", "1.2.3", "1,2", "1,2345", "1234,567", ",123",
		"1,", "1 000", "--5", "$$5", "5$", "%5", "1/0", "0/0", "1/", "/2", "1/2/3", "1e999999", "1e308/1e-308",
		"NaN", "Inf", "Infinity", "0x10", "1_000", "eighteen", "18 dollars", `\frac{1}{0}`, `\frac{1}{2`,
		`\frac{1}{2}{3}`, `\frac12`, `\sqrt{2}`, "٣", "1\x00",
	} {
		if n, ok := ParseNumber(in); ok {
			t.Errorf("ParseNumber(%q) = %v, want failure", in, n.Float64())
		}
	}
}

func TestNumberEqual(t *testing.T) {
	big := "123456789012345678901234567890"
	cases := []struct {
		a, b string
		tol  float64
		want bool
	}{
		{"18", "18", 0, true},
		{"18", "18.0", 0, true},
		{"18", "18.", 0, true},
		{"18", "$18", 0, true},
		{"1,234", "1234", 0, true},
		{"0", "-0", 0, true},
		{"0", "-0.0", 0, true},
		{"007", "7", 0, true},
		{"-5", "5", 0, false},
		{"0.75", "3/4", 0, true},
		{"0.5", "50%", 0, false},
		{"1e-3", "0.001", 0, true},
		{big, big, 0, true},
		{big, "123,456,789,012,345,678,901,234,567,890", 0, true},
		{big, "123456789012345678901234567891", 0, false}, // equal as float64, not as integers
		{"9007199254740993", "9007199254740992", 0, false},
		{"1/3", "0.333", 0, false},
		{"1/3", "0.333", 1e-3, true},
		{"1/3", "0.33", 1e-3, false},
		{"1000", "1001", 1e-3, true},
		{"1000", "1002", 1e-3, false},
		{"0", "1e-300", 1e-6, false},
		{"0", "0.0", 1e-6, true},
		{"-1", "1", 0.5, false},
	}
	for _, c := range cases {
		a, okA := ParseNumber(c.a)
		b, okB := ParseNumber(c.b)
		if !okA || !okB {
			t.Fatalf("ParseNumber(%q), ParseNumber(%q): %v, %v", c.a, c.b, okA, okB)
		}
		if got := a.Equal(b, c.tol); got != c.want {
			t.Errorf("%q.Equal(%q, %v) = %v, want %v", c.a, c.b, c.tol, got, c.want)
		}
		if got := b.Equal(a, c.tol); got != c.want {
			t.Errorf("%q.Equal(%q, %v) = %v, want %v (not symmetric)", c.b, c.a, c.tol, got, c.want)
		}
	}
}

func TestParseNumberAllocs(t *testing.T) {
	for _, in := range []string{"18", "1,234", "1,234.50", "$5", "3/4", "1e-3", "-7.25"} {
		allocs := testing.AllocsPerRun(100, func() {
			n, _ := ParseNumber(in)
			if math.IsNaN(n.Float64()) {
				panic("NaN")
			}
		})
		if allocs != 0 {
			t.Errorf("ParseNumber(%q) allocates %v times", in, allocs)
		}
	}
}
