package sandbox_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestDocsLanguageTable: docs/sandbox.md's languages table is the one the
// language table makes (sandbox.LanguageTable), between its markers.
func TestDocsLanguageTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- languages: begin (sandbox.LanguageTable) -->\n", "<!-- languages: end -->"
	_, rest, ok := strings.Cut(string(doc), begin)
	got, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/sandbox.md has no %q … %q section", begin, end)
	}
	if want := sandbox.LanguageTable(); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("docs/sandbox.md's languages table is not the language table's; put this between its markers:\n%s", want)
	}
}

// TestMakefileLanguagePackages: make deps installs the default languages'
// packages (CODE_EXEC_PACKAGES, with gcc for the launcher), and
// CODE_EXEC_LANGUAGES names each other language with its package
// (CODE_EXEC_MORE, name=package,libraries...); python comes with make deps' Python
// packages.
func TestMakefileLanguagePackages(t *testing.T) {
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	variable := func(name string) []string {
		m := regexp.MustCompile(`(?m)^` + name + ` :?= (.*)$`).FindSubmatch(mk)
		if m == nil {
			t.Fatalf("the Makefile does not set %s", name)
		}
		return strings.Fields(string(m[1]))
	}
	wantDefault, wantMore := []string{"gcc"}, []string{}
	for _, l := range sandbox.Languages() {
		if l.InProcess {
			continue // python3: make deps installs it with its Python packages
		}
		if l.Default {
			if !slices.Contains(wantDefault, l.Package) {
				wantDefault = append(wantDefault, l.Package)
			}
		} else {
			wantMore = append(wantMore, l.Name+"="+strings.Join(append([]string{l.Package}, l.Libraries...), ","))
		}
	}
	if got := variable("CODE_EXEC_PACKAGES"); !slices.Equal(got, wantDefault) {
		t.Errorf("CODE_EXEC_PACKAGES = %v, want %v", got, wantDefault)
	}
	if got := variable("CODE_EXEC_MORE"); !slices.Equal(got, wantMore) {
		t.Errorf("CODE_EXEC_MORE = %v, want %v", got, wantMore)
	}
}

// TestAvailableSaysHowToInstall: a language whose toolchain is missing
// says which files, which package, and the make deps line: plain for the
// default languages, with CODE_EXEC_LANGUAGES for the others.
func TestAvailableSaysHowToInstall(t *testing.T) {
	for _, l := range sandbox.Languages() {
		l.Toolchain = []string{"/nonexistent/" + l.Name}
		err := l.Available()
		want := "make deps CODE_EXEC_LANGUAGES=" + l.Name
		if l.Default {
			want = "(make deps does"
		}
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/"+l.Name) || !strings.Contains(err.Error(), "Debian package "+l.Package) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s without its toolchain: %v; want the file, the package %s and %q", l.Name, err, l.Package, want)
		}
	}
}
