package jsonl

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	cases := []struct {
		line                               string
		id, group, prompt, completion, err string
		fields                             int
	}{
		{line: `{"id": "a", "group": "g", "prompt": "p", "completion": "c", "answer": "18"}`,
			id: "a", group: "g", prompt: "p", completion: "c", fields: 1},
		{line: `{"id": 7, "group": 3, "completion": "c"}`, id: "7", group: "3", completion: "c"},
		{line: `{"completion": [{"role": "assistant", "content": "hi"}]}`, completion: "hi"},
		{line: `{"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
		         "completion": [{"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}]}`,
			prompt: "s\nu", completion: "a2"},
		{line: `{"completion": "c", "tests": [{"stdin": "1", "stdout": "2"}], "n": 1.5, "ok": true, "none": null}`,
			completion: "c", fields: 4},
		{line: `{"prompt": "p"}`, err: "missing completion"},
		{line: `{"completion": 5}`, err: "completion not text"},
		{line: `{"completion": [{"role": "user", "content": "q"}, {"role": "user", "content": "q"}]}`, err: "no assistant"},
		{line: `{"id": {"x": 1}, "completion": "c"}`, err: "object id"},
		{line: `[1, 2]`, err: "not an object"},
		{line: `null`, err: "null"},
		{line: `{"completion": "c"`, err: "truncated"},
		{line: "{\"completion\": \"\xff\"}", err: "invalid UTF-8"},
	}
	for _, c := range cases {
		row, err := parse([]byte(c.line))
		if c.err != "" {
			if err == nil {
				t.Errorf("%s: no error, want one (%s)", c.line, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		r := row.Rollout
		if r.Id != c.id || r.Group != c.group || r.Prompt != c.prompt || r.Completion != c.completion || len(r.GetFields().GetFields()) != c.fields {
			t.Errorf("%s: got id %q group %q prompt %q completion %q, %d fields", c.line, r.Id, r.Group, r.Prompt, r.Completion, len(r.GetFields().GetFields()))
		}
	}
}

func TestReader(t *testing.T) {
	input := strings.Join([]string{
		`{"id": "a", "completion": "x"}`,
		``,
		`{"completion": "` + strings.Repeat("y", 200) + `"}`,
		`not json`,
		`{"completion": "last, no newline"}`,
	}, "\n")
	rd := NewReader(strings.NewReader(input), 100)
	type got struct {
		line int
		id   string
		bad  bool
	}
	var gots []got
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *LineError
		if errors.As(err, &le) {
			gots = append(gots, got{line: le.Line, bad: true})
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		gots = append(gots, got{line: row.Line, id: string(row.ID)})
	}
	want := []got{{1, `"a"`, false}, {3, "", true}, {4, "", true}, {5, "5", false}}
	if len(gots) != len(want) {
		t.Fatalf("got %v, want %v", gots, want)
	}
	for i := range want {
		if gots[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, gots[i], want[i])
		}
	}
}

// FuzzParse checks that no line makes the parser panic, and that a parsed
// row's texts are valid UTF-8.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"id": "a", "completion": "c", "answer": ["1", 2]}`,
		`{"completion": [{"role": "assistant", "content": "hi"}]}`,
		`{"completion": "\ud800"}`,
		`{"completion": "c", "x": {"y": [[[[]]]]}}`,
		"{\"completion\": \"\xff\"}",
		`{}`, `[]`, `null`, `{"completion": 1e999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		row, err := parse(line)
		if err != nil {
			return
		}
		r := row.Rollout
		for _, s := range []string{r.Id, r.Group, r.Prompt, r.Completion} {
			if !utf8.ValidString(s) {
				t.Errorf("invalid UTF-8 in a parsed row: %q", s)
			}
		}
	})
}

// FuzzReader checks that any input splits into rows and line errors without
// panicking, and that line numbers only grow.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"completion\": \"a\"}\n\n{\"completion\": \"b\"}"), 64)
	f.Add([]byte("x\ny\n"), 1)
	f.Fuzz(func(t *testing.T, input []byte, maxLine int) {
		if maxLine < 1 || maxLine > 1<<20 {
			return
		}
		rd := NewReader(strings.NewReader(string(input)), maxLine)
		last := 0
		for range len(input) + 1 {
			row, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			line := 0
			var le *LineError
			switch {
			case errors.As(err, &le):
				line = le.Line
			case err != nil:
				t.Fatal(err)
			default:
				line = row.Line
			}
			if line <= last {
				t.Fatalf("line %d after line %d", line, last)
			}
			last = line
		}
		t.Fatal("more rows than bytes")
	})
}
