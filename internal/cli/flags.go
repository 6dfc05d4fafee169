package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"

	"github.com/agnivade/levenshtein"
)

// Parse parses args into fs's flags, which may come before, between or
// after the positional arguments (`rewardd init r.yml --force`), and
// returns the positional arguments in order. "--" ends the flags: what
// follows it is positional, even when it starts with "-"; a lone "-" is
// positional (stdin). A flag whose value is "--" must be written
// --name=--.
//
// Its errors name flags as --name, however they were written, and an
// unknown flag's error suggests the nearest defined one ("did you mean
// --samples?"). On -h, -help or --help it returns flag.ErrHelp after
// fs.Usage (or, when fs.Usage is nil, the flag package's default usage)
// has written the help to fs.Output(); nothing else is written there.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()

	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				if usage != nil {
					usage()
				} else {
					fmt.Fprintf(out, "Usage of %s:\n", fs.Name())
					fs.PrintDefaults()
				}
				return nil, err
			}
			return nil, &UsageError{flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// flagMention is the flag package's error messages that name a flag as
// -name: group 1 is what comes before the name, group 2 the name.
var flagMention = regexp.MustCompile(`^(flag provided but not defined: |flag needs an argument: |invalid value "(?:[^"\\]|\\.)*" for flag |invalid boolean value "(?:[^"\\]|\\.)*" for )-([^\s:=]+)`)

// flagError rewrites the flag package's error to name the flag as --name,
// and an unknown flag's with the nearest defined one.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	m := flagMention.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	prefix, name, rest := msg[m[2]:m[3]], msg[m[4]:m[5]], msg[m[1]:]
	switch prefix {
	case "flag provided but not defined: ":
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = "unknown flag --" + name
		if near := Nearest(name, names); near != "" {
			msg += "; did you mean --" + near + "?"
		}
		return msg + rest
	case "flag needs an argument: ":
		return "flag --" + name + " needs a value" + rest
	}
	return prefix + "--" + name + rest
}

// Nearest is the candidate nearest to the mistyped name, or "" when none
// is near enough to be what was meant: at most two edits away (a letter
// left out, added, changed, or two swapped) and fewer edits than the name
// has letters.
func Nearest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(name, c); d < bestDist && d < len(name) {
			best, bestDist = c, d
		}
	}
	return best
}
