package codeexec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// checker decides whether a program's output for a test is right. The
// built-in kinds compare in Go; a special checker is a program of the
// row's (see special.go).
type checker struct {
	// spec is the checker as written: exact, exact_ci, float:1e-6, …
	spec string
	kind checkerKind
	// tol is the float tolerance; abs and rel say which errors count.
	tol      float64
	abs, rel bool
}

type checkerKind int

const (
	exactLines checkerKind = iota
	exactLinesFoldCase
	floatTokens
	special
)

// parseChecker reads a checker spec: exact (lines equal once trailing
// white space and trailing empty lines are dropped), exact_ci (the same,
// ignoring the case of ASCII letters), float:E (white-space separated tokens; two numbers pass
// when their absolute or relative error is at most E, other tokens must be
// equal), float_abs:E and float_rel:E (only that error), special (the
// row's own checker program).
func parseChecker(spec string) (checker, error) {
	c := checker{spec: spec}
	name, tol, hasTol := strings.Cut(spec, ":")
	switch name {
	case "exact":
		c.kind = exactLines
	case "exact_ci":
		c.kind = exactLinesFoldCase
	case "special":
		c.kind = special
	case "float", "float_abs", "float_rel":
		c.kind = floatTokens
		c.abs, c.rel = name != "float_rel", name != "float_abs"
		if !hasTol {
			return c, fmt.Errorf("%q: want %s:E, the tolerance", spec, name)
		}
		e, err := strconv.ParseFloat(tol, 64)
		if err != nil || !(e >= 0) || math.IsInf(e, 0) {
			return c, fmt.Errorf("%q: the tolerance must be a number >= 0", spec)
		}
		c.tol = e
		return c, nil
	default:
		return c, fmt.Errorf("%q: want exact, exact_ci, float:E, float_abs:E, float_rel:E or special", spec)
	}
	if hasTol {
		return c, fmt.Errorf("%q: %s takes no argument", spec, name)
	}
	return c, nil
}

// same says whether got is a right output when want is the expected one.
// It is not for special checkers.
func (c checker) same(got []byte, want string) bool {
	switch c.kind {
	case exactLines:
		return sameLines(got, []byte(want), bytes.Equal)
	case exactLinesFoldCase:
		return sameLines(got, []byte(want), equalFoldASCII)
	case floatTokens:
		return c.sameTokens(got, []byte(want))
	}
	return false
}

// sameLines compares a program's output with the expected one line by
// line, ignoring trailing whitespace on each line and trailing empty lines;
// the number of lines must match.
func sameLines(got, want []byte, equal func(a, b []byte) bool) bool {
	g, w := lines(got), lines(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if !equal(g[i], w[i]) {
			return false
		}
	}
	return true
}

// equalFoldASCII says whether a and b are equal once ASCII letters are
// folded to lower case; every other byte, each byte of a multi-byte UTF-8
// character included, must be equal. Judges fold case so (Kattis' default
// validator compares tokens with strcasecmp in the C locale), not as
// Unicode does: the Kelvin sign U+212A is not k, the long s U+017F is not
// s, and the Turkish dotted İ and dotless ı are neither i nor I.
func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lines(b []byte) [][]byte {
	ls := bytes.Split(b, []byte("\n"))
	for i, l := range ls {
		ls[i] = bytes.TrimRight(l, " \t\r\f\v")
	}
	for len(ls) > 0 && len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// sameTokens compares white-space separated tokens: as many, each equal,
// or both decimal numbers within the tolerance of the expected one.
func (c checker) sameTokens(got, want []byte) bool {
	g, w := bytes.Fields(got), bytes.Fields(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if bytes.Equal(g[i], w[i]) {
			continue
		}
		x, okX := decimal(g[i])
		y, okY := decimal(w[i])
		if !okX || !okY || !c.close(x, y) {
			return false
		}
	}
	return true
}

// close says whether x is within the tolerance of the expected y.
func (c checker) close(x, y float64) bool {
	d := math.Abs(x - y)
	return c.abs && d <= c.tol || c.rel && d <= c.tol*math.Abs(y)
}

// decimal parses a token written as a decimal number (digits, an optional
// sign, point and exponent): not "nan", "inf", hex or digit separators,
// which strconv would take.
func decimal(tok []byte) (float64, bool) {
	digits := 0
	for i, ch := range tok {
		switch {
		case ch >= '0' && ch <= '9':
			digits++
		case ch == '+' || ch == '-':
			if i > 0 && tok[i-1] != 'e' && tok[i-1] != 'E' {
				return 0, false
			}
		case ch == '.' || ch == 'e' || ch == 'E':
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, !math.IsNaN(v)
}
