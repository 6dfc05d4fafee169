package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
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

// TestDottedFields: a *_field reaches into nested data as open-r1's and
// PRIME's datasets hold it (verification_info.answer, test_cases.0.input),
// and a row without it is NOT_APPLICABLE with a reason naming the part
// that is missing.
func TestDottedFields(t *testing.T) {
	st := newStack(t, `
functions:
  - {name: accuracy, kind: exact_match, reference_field: verification_info.answer, extract: [boxed]}
  - {name: echoes_input, kind: regex, pattern_field: test_cases.0.input, mode: search}
`)
	body, _ := json.Marshal(map[string]any{"rollouts": []map[string]any{
		{"completion": `so \boxed{42} from 6 7`, "fields": map[string]any{
			"verification_info": map[string]any{"answer": "42"},
			"test_cases":        []any{map[string]any{"input": "6 7"}},
		}},
		{"completion": `\boxed{42}`, "fields": map[string]any{
			"verification_info": map[string]any{"solution": "42"},
			"test_cases":        []any{},
		}},
	}})
	code, out := post(t, st.httpURL+"/v1/score", body)
	if code != http.StatusOK {
		t.Fatalf("POST /v1/score: %d %s", code, out)
	}
	var resp struct {
		Functions []struct {
			Name    string            `json:"name"`
			Values  []any             `json:"values"`
			Status  []string          `json:"status"`
			Errors  map[string]string `json:"errors"`
			Reasons map[string]string `json:"reasons"`
		} `json:"functions"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"accuracy":     `no reference in field "verification_info.answer": "verification_info" has no key "answer"`,
		"echoes_input": `no pattern in field test_cases.0.input: "test_cases" has 0 item(s), no item 0`,
	}
	for _, fs := range resp.Functions {
		if fs.Values[0] != 1.0 || fs.Status[0] != "SCORE_STATUS_OK" {
			t.Errorf("%s on the row with the nested field: %v %v, want 1 OK", fs.Name, fs.Values[0], fs.Status[0])
		}
		if fs.Status[1] != "SCORE_STATUS_NOT_APPLICABLE" || fs.Reasons["1"] != want[fs.Name] {
			t.Errorf("%s on the row without it: %v %q, want NOT_APPLICABLE %q", fs.Name, fs.Status[1], fs.Reasons["1"], want[fs.Name])
		}
	}
}

// TestFunctionsOverHTTP: GET /v1/functions lists what ListFunctions lists
// (names, kinds, params, fingerprint), and each listed function sent back
// inline under another name scores every rollout as the served one does.
func TestFunctionsOverHTTP(t *testing.T) {
	st := newStack(t, compatConfig)
	code, out := get(t, st.httpURL+"/v1/functions")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/functions: %d %s", code, out)
	}
	var listed struct {
		Functions []struct {
			Name, Kind string
			Weight     float64
			Params     map[string]any
			ParamsYaml string
		}
		ConfigFingerprint string
	}
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatal(err)
	}
	lf, err := st.client.ListFunctions(context.Background(), &rewardv1.ListFunctionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Functions) != 3 || listed.ConfigFingerprint != lf.GetConfigFingerprint() {
		t.Fatalf("GET /v1/functions: %s; gRPC lists %d, fingerprint %s", out, len(lf.GetFunctions()), lf.GetConfigFingerprint())
	}
	var rollouts []map[string]any
	for i, r := range gsm8k(t)[:40] {
		c := r.Answer
		if i%2 == 1 {
			c = "<think>" + r.Answer + "</think><answer>" + goldNumber(r.Answer) + "</answer>"
		}
		if i%5 == 0 {
			c = "Step 1: guess. The answer is 7"
		}
		rollouts = append(rollouts, map[string]any{"completion": c, "fields": map[string]any{"answer": goldNumber(r.Answer)}})
	}
	var inline []map[string]any
	var served []string
	for i, f := range listed.Functions {
		info := lf.GetFunctions()[i]
		if f.Name != info.GetName() || f.Kind != info.GetKind() || f.Weight != info.GetWeight() || f.ParamsYaml != info.GetParamsYaml() || len(f.Params) == 0 {
			t.Errorf("function %d over HTTP %+v, over gRPC %v", i, f, info)
		}
		served = append(served, f.Name)
		inline = append(inline, map[string]any{"name": "again_" + f.Name, "kind": f.Kind, "params": f.Params})
	}
	got := scoreJSON(t, st.httpURL, map[string]any{"rollouts": rollouts, "functions": served, "inline": inline})
	for _, name := range served {
		for i := range rollouts {
			a, b := got[name][i], got["again_"+name][i]
			if a == nil || b == nil || *a != *b {
				t.Errorf("%s row %d: served %v, sent back inline %v", name, i, a, b)
			}
		}
	}
}

// openRLHFClient posts as OpenRLHF's request_api_wrapper does
// (openrlhf/utils/remote_rm_utils.py): the JSON body, a 180 s timeout, and
// on any failure (an HTTP error status included) a 1 s sleep and another
// try, 5 tries in all; a 2xx answer must hold "rewards", which
// remote_rm_fn turns into torch.tensor(rewards): every entry a number.
// It returns the rewards and how many requests it sent.
func openRLHFClient(client *http.Client, url string, body []byte) ([]float64, int, error) {
	var last error
	for try := 1; try <= 5; try++ {
		rewards, err := func() ([]float64, error) {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode/100 != 2 {
				return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, out)
			}
			var answer map[string]json.RawMessage
			if err := json.Unmarshal(out, &answer); err != nil {
				return nil, err
			}
			raw, ok := answer["rewards"]
			if !ok {
				return nil, fmt.Errorf("rewards not in %s", out)
			}
			var rewards []*float64 // torch.tensor refuses a None
			if err := json.Unmarshal(raw, &rewards); err != nil {
				return nil, err
			}
			nums := make([]float64, len(rewards))
			for i, r := range rewards {
				if r == nil {
					return nil, fmt.Errorf("torch.tensor(rewards): reward %d is None in %s", i, out)
				}
				nums[i] = *r
			}
			return nums, nil
		}()
		if err == nil {
			return rewards, try, nil
		}
		last = err
		time.Sleep(time.Second)
	}
	return nil, 5, last
}

// burstConfig serves GSM8K accuracy with few admission slots, so that
// 1,000 requests at once must wait for them.
const burstConfig = `
functions:
  - {name: accuracy, kind: exact_match, reference_field: answer, extract: [gsm8k, last_number], normalize: [strip, numeric]}
limits: {max_inflight_requests: 4}
`

// TestOpenRLHFBurst (finding: 800 samples took 1,158 requests, bursts got
// 429 and OpenRLHF retried): 1,000 OpenRLHF workers each send one sample
// at once to a server with 4 admission slots; every one is answered with
// numbers on its first request, as the requests wait for a slot in turn.
// Every tenth sample has no label: its reward is 0.0, the endpoint's
// unscorable_reward, not a None that would crash torch.tensor.
func TestOpenRLHFBurst(t *testing.T) {
	st := newStack(t, burstConfig)
	rows := gsm8k(t)[:1000]
	client := &http.Client{Timeout: 180 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	sent := make([]int, len(rows))
	rewards := make([][]float64, len(rows))
	errs := make([]error, len(rows))
	release := make(chan struct{})
	for i, r := range rows {
		prompt := "Question: " + r.Question + "\nAnswer: "
		body := map[string]any{"query": []string{prompt + r.Answer}, "prompts": []string{prompt}, "labels": []string{goldNumber(r.Answer)}}
		if i%10 == 9 {
			delete(body, "labels")
		}
		b, _ := json.Marshal(body)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			rewards[i], sent[i], errs[i] = openRLHFClient(client, st.httpURL+"/get_reward", b)
		}()
	}
	close(release)
	wg.Wait()
	total, answered := 0, 0
	for i := range rows {
		total += sent[i]
		if errs[i] != nil {
			t.Errorf("sample %d: %v after %d requests", i, errs[i], sent[i])
			continue
		}
		want := 1.0
		if i%10 == 9 {
			want = 0
		}
		if len(rewards[i]) != 1 || rewards[i][0] != want {
			t.Errorf("sample %d: rewards %v, want [%v]", i, rewards[i], want)
			continue
		}
		answered++
	}
	t.Logf("%d of %d one-sample requests answered with numbers, in %d requests", answered, len(rows), total)
	if total > len(rows) {
		t.Errorf("%d requests for %d samples: bursts were refused and retried", total, len(rows))
	}
	if got := metricValue(t, st.httpURL, "rewardd_unscorable_rollouts_total"); got != "100" {
		t.Errorf("rewardd_unscorable_rollouts_total = %s, want 100", got)
	}
}

// gate is a test kind that holds a completion "gate" until open is
// closed, counting in entered the ones it holds, and scores anything else 1.
type gate struct {
	open    chan struct{}
	entered chan struct{}
}

type gateParams struct{}

func (g *gate) Params() gateParams { return gateParams{} }

func (g *gate) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	if r.Completion == "gate" {
		g.entered <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return scorers.Errorf("cancelled: %v", ctx.Err())
		}
	}
	return scorers.Score(1)
}

// TestQueueWaitRunsOut: with every slot held, a /get_reward request waits
// for one and is answered once one is given back; with queue_wait 0 it is
// refused at once, and a wait that runs out is a 429 naming
// limits.queue_wait, as is a request whose body does not fit the queue.
func TestQueueWaitRunsOut(t *testing.T) {
	for _, c := range []struct {
		name, limits string
		release      bool   // open the gate while the request waits
		want         int    // its status
		names        string // what a refusal names
	}{
		{"waits, then scored", "{max_inflight_requests: 2, max_connections: 16, queue_wait: 1m}", true, http.StatusOK, ""},
		// A wait longer than read_timeout: the body is in, the connection's
		// read deadline must not end the request.
		{"waits past read_timeout", "{max_inflight_requests: 2, max_connections: 16, queue_wait: 1m, read_timeout: 200ms}", true, http.StatusOK, ""},
		{"no queue", "{max_inflight_requests: 2, max_connections: 16, queue_wait: 0s}", false, http.StatusTooManyRequests, "server at capacity"},
		{"wait runs out", "{max_inflight_requests: 2, max_connections: 16, queue_wait: 100ms}", false, http.StatusTooManyRequests, "limits.queue_wait"},
		{"queue full", "{max_inflight_requests: 2, max_connections: 16, queue_bytes: 10}", false, http.StatusTooManyRequests, "limits.queue_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &gate{open: make(chan struct{}), entered: make(chan struct{}, 2)}
			kinds := builtin.Registry()
			kinds["gate"] = scorers.Kind(func(gateParams) (*gate, error) { return g, nil })
			st := newStackWith(t, "functions:\n  - {name: held, kind: gate}\nlimits: "+c.limits+"\n", nil, kinds)
			var wg sync.WaitGroup
			for range 2 { // both slots held
				wg.Add(1)
				go func() {
					defer wg.Done()
					post(t, st.httpURL+"/get_reward", []byte(`{"query": ["gate"]}`))
				}()
			}
			<-g.entered
			<-g.entered
			done := make(chan struct{})
			var code int
			var out []byte
			go func() {
				defer close(done)
				code, out = post(t, st.httpURL+"/get_reward", []byte(`{"query": ["1"]}`))
			}()
			if c.release {
				for metricValue(t, st.httpURL, "rewardd_queued_requests") != "1" {
					runtime.Gosched() // until it waits in the queue
				}
				if strings.Contains(c.limits, "read_timeout") {
					time.Sleep(time.Second) // past it
				}
				close(g.open)
				<-done
			} else {
				<-done
				close(g.open)
			}
			wg.Wait()
			if code != c.want || c.names != "" && !strings.Contains(string(out), c.names) {
				t.Errorf("%d %s, want %d naming %q", code, out, c.want, c.names)
			}
		})
	}
}
