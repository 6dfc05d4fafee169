package cli

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

func testFlags(out *bytes.Buffer) (*flag.FlagSet, *bool, *string) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(out)
	return fs, fs.Bool("force", false, "overwrite"), fs.String("samples", "", "rows")
}

func TestParseFlagsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args       []string
		positional []string
		force      bool
		samples    string
	}{
		{[]string{"r.yml", "--force"}, []string{"r.yml"}, true, ""},
		{[]string{"--force", "r.yml"}, []string{"r.yml"}, true, ""},
		{[]string{"a", "-samples", "s.jsonl", "b", "--force"}, []string{"a", "b"}, true, "s.jsonl"},
		{[]string{"-", "--samples=x"}, []string{"-"}, false, "x"},
		{[]string{"a", "--", "--force", "-x"}, []string{"a", "--force", "-x"}, false, ""},
		{[]string{"--samples=--", "a"}, []string{"a"}, false, "--"},
		{nil, nil, false, ""},
	} {
		var out bytes.Buffer
		fs, force, samples := testFlags(&out)
		positional, err := Parse(fs, c.args)
		if err != nil || !slices.Equal(positional, c.positional) || *force != c.force || *samples != c.samples || out.Len() != 0 {
			t.Errorf("Parse(%q) = %q, %v, --force %v, --samples %q, output %q; want %q, --force %v, --samples %q",
				c.args, positional, err, *force, *samples, out.String(), c.positional, c.force, c.samples)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--sampels x":       "unknown flag --sampels; did you mean --samples?",
		"a -frce":           "unknown flag --frce; did you mean --force?",
		"--zz":              "unknown flag --zz",
		"--samples":         "flag --samples needs a value",
		"--force=maybe":     `invalid boolean value "maybe" for --force: parse error`,
		"-force=\"q\\\"x\"": `invalid boolean value "\"q\\\"x\"" for --force`,
	} {
		var out bytes.Buffer
		fs, _, _ := testFlags(&out)
		_, err := Parse(fs, strings.Fields(args))
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "did you mean") != strings.Contains(want, "did you mean") || out.Len() != 0 {
			t.Errorf("Parse(%s): %v, output %q; want a UsageError starting %q and nothing written", args, err, out.String(), want)
		}
	}
}

func TestParseHelp(t *testing.T) {
	var out bytes.Buffer
	fs, _, _ := testFlags(&out)
	if _, err := Parse(fs, []string{"x", "--help"}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-samples") {
		t.Errorf("Parse(--help): %v, output %q; want flag.ErrHelp and the default usage", err, out.String())
	}
	called := 0
	fs, _, _ = testFlags(&out)
	fs.Usage = func() { called++ }
	if _, err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) || called != 1 {
		t.Errorf("Parse(-h): %v, Usage called %d times; want flag.ErrHelp and once", err, called)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"init", "serve", "score", "check", "version", "help"}
	for typed, want := range map[string]string{
		"serv": "serve", "chekc": "check", "vresion": "version", "scor": "score", "hlep": "help",
		"deploy": "", "x": "", "ab": "",
	} {
		if got := Nearest(typed, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", typed, got, want)
		}
	}
}
