package extract

import (
	"math"
	"strconv"
	"strings"
)

// Number is a parsed numeric answer. Integers keep their digits, so that two
// integers compare exactly however large they are; every number also has a
// float64 value.
type Number struct {
	// digits holds the digits of an integer without its sign or leading
	// zeros; it may contain thousands commas. It is "" when the number is
	// not written as an integer.
	digits string
	neg    bool
	f      float64
}

// ParseNumber parses a numeric answer. It accepts, around optional white
// space:
//
//   - an optional sign (+ or -) and an optional dollar sign ($ or \$), in
//     either order: "-2", "+7", "$5", "-$5", "\$5";
//   - a decimal number: digits with optional thousands commas (a first group
//     of one to three digits, then groups of exactly three: "1,234,567"),
//     an optional fraction part and an optional exponent: "1,234.50", "18.",
//     ".5", "1e-3", "2.5E+6";
//   - or a fraction of two such unsigned numbers: "3/4", "\frac{3}{4}"
//     (also \dfrac and \tfrac);
//   - then an optional percent sign (% or \%), which is dropped: "50%" is 50,
//     not 0.5, as answers and references usually write the same quantity the
//     same way.
//
// A number written without a fraction part or exponent ("18", "1,000",
// "18.") is an integer. ParseNumber reports false for anything else, for a
// zero denominator, and for a value that overflows float64.
func ParseNumber(s string) (Number, bool) {
	s = strings.TrimSpace(s)
	neg, s, signed := cutSign(s)
	if rest, ok := cutDollar(s); ok {
		s = rest
		if !signed {
			neg, s, _ = cutSign(s)
		}
	}
	var n Number
	var ok bool
	if s != "" && s[0] == '\\' {
		n, s, ok = latexFraction(s)
	} else {
		n, s, ok = rational(s)
	}
	if !ok || s != "" && s != "%" && s != `\%` {
		return Number{}, false
	}
	n.neg = neg && n.f != 0 // -0 is 0
	if neg {
		n.f = -n.f
	}
	return n, true
}

// Float64 returns the value of n (the nearest float64 for a large integer).
func (n Number) Float64() float64 { return n.f }

// IsInt reports whether n was written as an integer.
func (n Number) IsInt() bool { return n.digits != "" }

// Equal reports whether n and m are the same number.
//
// Two integers are equal when their digits are, whatever their size. Other
// pairs compare as float64: exactly when tol is 0, and within the relative
// tolerance tol otherwise: |n-m| <= tol*max(|n|,|m|). With tol > 0 two
// integers that differ in their digits are also compared that way, so
// 1000 and 1001 are equal under tol 0.001. Nothing but 0 is within any
// tolerance of 0.
func (n Number) Equal(m Number, tol float64) bool {
	bothInt := n.digits != "" && m.digits != ""
	if bothInt && n.neg == m.neg && sameDigits(n.digits, m.digits) {
		return true
	}
	if tol == 0 {
		return !bothInt && n.f == m.f
	}
	return math.Abs(n.f-m.f) <= tol*max(math.Abs(n.f), math.Abs(m.f))
}

// cutSign removes a leading + or - from s.
func cutSign(s string) (neg bool, rest string, ok bool) {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		return s[0] == '-', s[1:], true
	}
	return false, s, false
}

// cutDollar removes a leading $ or \$ from s.
func cutDollar(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "$"); ok {
		return rest, true
	}
	return strings.CutPrefix(s, `\$`)
}

// rational parses the number "a" or the fraction "a/b" at the start of s,
// and returns what follows.
func rational(s string) (n Number, rest string, ok bool) {
	n, i, ok := decimal(s)
	if !ok || i == len(s) || s[i] != '/' {
		return n, s[i:], ok
	}
	d, j, ok := decimal(s[i+1:])
	if !ok {
		return Number{}, "", false
	}
	n, ok = divide(n, d)
	return n, s[i+1+j:], ok
}

// latexFraction parses \frac{a}{b} (or \dfrac, \tfrac) at the start of s,
// and returns what follows.
func latexFraction(s string) (n Number, rest string, ok bool) {
	for _, cmd := range [...]string{`\frac{`, `\dfrac{`, `\tfrac{`} {
		if rest, ok = strings.CutPrefix(s, cmd); ok {
			break
		}
	}
	if !ok {
		return Number{}, "", false
	}
	n, i, ok := decimal(rest)
	if !ok || !strings.HasPrefix(rest[i:], "}{") {
		return Number{}, "", false
	}
	rest = rest[i+2:]
	d, j, ok := decimal(rest)
	if !ok || !strings.HasPrefix(rest[j:], "}") {
		return Number{}, "", false
	}
	n, ok = divide(n, d)
	return n, rest[j+1:], ok
}

// divide returns the fraction a/b, which is never an integer; it reports
// false for a zero denominator or an overflow.
func divide(a, b Number) (Number, bool) {
	if b.f == 0 {
		return Number{}, false
	}
	f := a.f / b.f
	if math.IsInf(f, 0) {
		return Number{}, false
	}
	return Number{f: f}, true
}

// decimal parses the unsigned decimal number at the start of s (optional
// thousands commas, fraction part and exponent) and returns its length.
func decimal(s string) (n Number, end int, ok bool) {
	i, commas := scanInt(s)
	intEnd := i
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = i - j
	}
	if intEnd == 0 && fracDigits == 0 {
		return Number{}, 0, false
	}
	exp := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return Number{}, 0, false
		}
		exp = true
	}
	if fracDigits == 0 && !exp {
		n, ok = integer(s[:intEnd], commas)
	} else {
		n.f, ok = parseFloat(s[:i], commas)
	}
	return n, i, ok
}

// scanInt returns the length of the integer part at the start of s: digits,
// with commas only between a first group of one to three digits and groups of
// exactly three. A comma that breaks the rule ends the integer before it.
func scanInt(s string) (end int, commas bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 || i > 3 {
		return i, false
	}
	for i+4 <= len(s) && s[i] == ',' && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) &&
		(i+4 == len(s) || !isDigit(s[i+4])) {
		i += 4
		commas = true
	}
	return i, commas
}

// integer builds the Number of the digits s (not empty; commas valid).
func integer(s string, commas bool) (Number, bool) {
	digits := s
	for digits != "" && (digits[0] == '0' || digits[0] == ',') {
		digits = digits[1:]
	}
	if digits == "" {
		return Number{digits: "0"}, true
	}
	if len(digits) <= 19 { // fits in a uint64 even with no commas
		var u uint64
		for i := 0; i < len(digits); i++ {
			if c := digits[i]; c != ',' {
				u = u*10 + uint64(c-'0')
			}
		}
		return Number{digits: digits, f: float64(u)}, true
	}
	f, ok := parseFloat(digits, commas)
	return Number{digits: digits, f: f}, ok
}

// parseFloat parses a syntactically valid unsigned decimal, dropping its
// commas first. It reports false when the value overflows.
func parseFloat(s string, commas bool) (float64, bool) {
	if commas {
		var buf [64]byte
		b := buf[:0]
		if len(s) > len(buf) {
			b = make([]byte, 0, len(s))
		}
		for i := 0; i < len(s); i++ {
			if s[i] != ',' {
				b = append(b, s[i])
			}
		}
		s = string(b)
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// sameDigits compares two digit strings, ignoring commas.
func sameDigits(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == ',' {
			i++
		}
		for j < len(b) && b[j] == ',' {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i++
		j++
	}
}
