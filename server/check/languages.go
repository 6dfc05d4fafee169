package check

import (
	"fmt"
	"strings"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// Languages says which code_exec languages this machine can run: those
// whose toolchain is installed (a sandbox runs every one of them), and for
// the others how to install them.
type Languages struct {
	// Installed are the languages whose toolchain is installed, by name.
	Installed []string `json:"installed"`
	// Missing are the others, each with its install line.
	Missing []MissingLanguage `json:"missing,omitempty"`
}

// MissingLanguage is a language whose toolchain this machine lacks.
type MissingLanguage struct {
	Name string `json:"name"`
	// Install says what is missing and how to install it.
	Install string `json:"install"`
}

// CodeLanguages looks at this machine's toolchains for the language table.
func CodeLanguages() *Languages {
	ls := &Languages{Installed: []string{}}
	for _, l := range sandbox.Languages() {
		if err := l.Available(); err != nil {
			ls.Missing = append(ls.Missing, MissingLanguage{Name: l.Name, Install: err.Error()})
			continue
		}
		ls.Installed = append(ls.Installed, l.Name)
	}
	return ls
}

// writeLine writes the languages' line.
func (ls *Languages) writeLine(b *strings.Builder) {
	fmt.Fprintf(b, "code_exec languages this machine can run: %s", strings.Join(ls.Installed, ", "))
	if len(ls.Missing) > 0 {
		names := make([]string, len(ls.Missing))
		for i, m := range ls.Missing {
			names[i] = m.Name
		}
		fmt.Fprintf(b, "; not installed: %s (CODE_EXEC_LANGUAGES=all make deps installs them)", strings.Join(names, ", "))
	}
	b.WriteByte('\n')
}
