package rewardd_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// verb is a fmt verb in a format string; %q prints quotes around its value.
var (
	verb      = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z]`)
	quoteVerb = regexp.MustCompile(`%[-+# 0-9.*]*q`)
	message   = regexp.MustCompile("(?m)^### `(.+)`$")
)

// codeMessages returns the string literals of the module's Go code (tests
// and generated code left out), each as a user sees it printed: a fmt verb
// is "…", and %q is "…" in quotes.
func codeMessages(t *testing.T) []string {
	t.Helper()
	var msgs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "bin", ".bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING {
				continue
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				continue
			}
			v = quoteVerb.ReplaceAllString(v, `"…"`)
			v = verb.ReplaceAllString(v, "…")
			msgs = append(msgs, strings.ReplaceAll(v, "%%", "%"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestTroubleshootingMessagesExist: each message docs/troubleshooting.md
// explains (a "### `message`" heading, "…" for what the code fills in) is
// in one string literal of the code, so that the page does not keep
// explaining an error that can no longer happen.
func TestTroubleshootingMessagesExist(t *testing.T) {
	data, err := os.ReadFile("docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := message.FindAllStringSubmatch(string(data), -1)
	if len(listed) < 20 {
		t.Fatalf("docs/troubleshooting.md lists %d messages as ### `message` headings; want the page's entries", len(listed))
	}
	msgs := codeMessages(t)
	for _, m := range listed {
		found := false
		for _, code := range msgs {
			if strings.Contains(code, m[1]) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/troubleshooting.md explains %q, which no string literal of the code holds (with \"…\" for a fmt verb): update or remove the entry", m[1])
		}
	}
}
