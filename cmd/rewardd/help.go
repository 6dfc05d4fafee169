package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rewardd/rewardd/internal/cli"
)

// flagSet is a command's flags; -h writes its help to help. Its Args,
// NArg and Arg are the positional arguments, wherever they stood among
// the flags.
type flagSet struct {
	*flag.FlagSet
	help io.Writer
	args []string
}

// newFlags returns a flag set whose errors are returned, not printed.
func newFlags(name string, help io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, help: help}
}

// Args are the positional arguments.
func (fs *flagSet) Args() []string { return fs.args }

// NArg is the number of positional arguments.
func (fs *flagSet) NArg() int { return len(fs.args) }

// Arg is the i'th positional argument, or "" when there are fewer.
func (fs *flagSet) Arg(i int) string {
	if i < 0 || i >= len(fs.args) {
		return ""
	}
	return fs.args[i]
}

// parseFlags parses args and refuses positional arguments.
func parseFlags(fs *flagSet, args []string) error {
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseFlagsOnly parses args as cli.Parse does (flags before or after the
// positional arguments, errors naming --flag), leaving the positional
// arguments in fs.Args(). On -h or --help it prints the command's help and
// returns flag.ErrHelp.
func parseFlagsOnly(fs *flagSet, args []string) error {
	var err error
	fs.args, err = cli.Parse(fs.FlagSet, args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs.help, fs.FlagSet)
		return err
	default:
		return cli.Usagef("%v (--help lists the flags)", err)
	}
}

// printHelp writes a command's lines of usage and its flags, as
// "--name ARG" with their meaning and default.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n%s\n", synopsis(fs.Name()))
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n++; n == 1 {
			fmt.Fprintf(w, "\nFlags:\n")
		}
		arg, meaning := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s", f.Name, arg, meaning)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// synopsis is the command's lines of usage, continuations included.
func synopsis(name string) string {
	var lines []string
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  rewardd "+name+" ") || line == "  rewardd "+name:
			lines = append(lines, line)
		case len(lines) > 0 && strings.HasPrefix(line, "    "):
			lines = append(lines, line)
		case len(lines) > 0:
			return strings.Join(lines, "\n")
		}
	}
	return strings.Join(lines, "\n")
}
