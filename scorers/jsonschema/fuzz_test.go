package jsonschema

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzExtract checks the JSON extraction on any text: what it returns is
// JSON (it marshals), the same twice; a text that is JSON is returned
// whole; and JSON in a fenced block after any text without fences is
// found.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"", "{}", "x {\"a\": [1, 2]} y", "```json\n[1]\n```", "{{{{", "[1, {\"a\": ", "1e999", "\"\\ud800\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		doc, ok := Extract(text)
		doc2, ok2 := Extract(text)
		if ok != ok2 {
			t.Fatalf("%q: %v then %v", text, ok, ok2)
		}
		if ok {
			a, err := json.Marshal(doc)
			b, _ := json.Marshal(doc2)
			if err != nil || string(a) != string(b) {
				t.Fatalf("%q: %s (%v) then %s", text, a, err, b)
			}
		}
		if json.Valid([]byte(text)) && strings.TrimSpace(text) != "" {
			if _, ok := Extract(text); !ok {
				t.Fatalf("%q is JSON, but Extract found none", text)
			}
		}
		if strings.Contains(text, "```") {
			return
		}
		doc, ok = Extract(text + "\n```json\n{\"fuzz\": [1, 2]}\n```\n")
		m, isObj := doc.(map[string]any)
		if !ok || !isObj || m["fuzz"] == nil {
			t.Fatalf("%q then a fenced object: %v %v", text, doc, ok)
		}
	})
}
