package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// scoreJSON posts body to /v1/score and returns each function's values,
// null for NaN.
func scoreJSON(t *testing.T, base string, body any) map[string][]*float64 {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	code, out := post(t, base+"/v1/score", b)
	if code != http.StatusOK {
		t.Fatalf("POST /v1/score: %d %s", code, out)
	}
	var resp struct {
		Functions []struct {
			Name   string     `json:"name"`
			Values []*float64 `json:"values"`
		} `json:"functions"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	got := make(map[string][]*float64)
	for _, fs := range resp.Functions {
		got[fs.Name] = fs.Values
	}
	return got
}

// TestOpenR1CompatOverHTTP: a user coming from open-r1 sends its two
// functions inline with compat: openr1 and gets open-r1's numbers for its
// own test strings (tests/test_rewards.py), where rewardd's own rules give
// other numbers.
func TestOpenR1CompatOverHTTP(t *testing.T) {
	st := newStack(t, testConfig)
	texts := []string{
		"<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>",
		"<think>Missing closing</think><answer>Missing closing",
		"Some reasoning\n</think>\n<answer>\nThe answer\n</answer>",
		"<think>\nSome reasoning\n</think>\n<answer>\nThe answer",
		"<think>reason</think><answer>42</answer>",
	}
	wantFormat := []float64{1, 0, 0, 0, 0}
	wantTags := []float64{1, 0, 0.75, 0.75, 0}
	var rollouts []map[string]any
	for _, text := range texts {
		rollouts = append(rollouts, map[string]any{"completion": text})
	}
	got := scoreJSON(t, st.httpURL, map[string]any{
		"rollouts":  rollouts,
		"functions": []string{"format"},
		"inline": []map[string]any{
			{"name": "format_reward", "kind": "format", "params": map[string]any{"compat": "openr1"}},
			{"name": "tag_count_reward", "kind": "format", "params": map[string]any{"mode": "partial", "compat": "openr1"}},
			{"name": "tag_count_bare", "kind": "format", "params": map[string]any{"mode": "partial"}},
		},
	})
	for i := range texts {
		if v := got["format_reward"][i]; v == nil || *v != wantFormat[i] {
			t.Errorf("format_reward on %q: %v, open-r1 %v", texts[i], v, wantFormat[i])
		}
		if v := got["tag_count_reward"][i]; v == nil || *v != wantTags[i] {
			t.Errorf("tag_count_reward on %q: %v, open-r1 %v", texts[i], v, wantTags[i])
		}
	}
	if v := got["tag_count_bare"][4]; v == nil || *v != 1 {
		t.Errorf("partial without compat on bare tags: %v, want 1 (rewardd's own rule)", v)
	}
}
