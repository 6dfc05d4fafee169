package toolcall

import (
	"strings"
	"testing"
)

// FuzzExtract checks call extraction on any text: calls or a reason, never
// both nor neither, the same twice; and a Hermes block appended to a text
// without one is read.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"", "<tool_call>", `{"name": "f"}`, `[{"function": {"name": "f", "arguments": "{}"}}]`, "```json\n{\"name\": 1}\n```", `{"tool_calls": 3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		calls, why := Extract(text)
		calls2, why2 := Extract(text)
		if why != why2 || len(calls) != len(calls2) {
			t.Fatalf("%q: %v %q, then %v %q", text, calls, why, calls2, why2)
		}
		if (why == "") == (len(calls) == 0) {
			t.Fatalf("%q: %v %q", text, calls, why)
		}
		if strings.Contains(text, "<tool_call>") {
			return
		}
		calls, why = Extract(text + "\n<tool_call>{\"name\": \"fuzz\", \"arguments\": {\"a\": 1}}</tool_call>")
		if why != "" || len(calls) != 1 || calls[0].Name != "fuzz" {
			t.Fatalf("%q then a block: %v %q", text, calls, why)
		}
	})
}
