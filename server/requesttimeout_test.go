package server_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rewardd/rewardd/internal/servertest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// hold is a test kind that scores a completion holding a number with that
// number, and holds the completion "hold" until its request's context
// ends, then returns an Error, as a scorer whose work is cut short does.
// It records the completions it scored.
type hold struct{ scored *sync.Map }

type holdParams struct{}

func (h *hold) Params() holdParams { return holdParams{} }

func (h *hold) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	if r.Completion == "hold" {
		<-ctx.Done()
		return scorers.Errorf("cancelled: %v", ctx.Err())
	}
	v, err := strconv.ParseFloat(r.Completion, 64)
	if err != nil {
		return scorers.Errorf("not a number: %q", r.Completion)
	}
	h.scored.Store(r.Completion, true)
	return scorers.Score(v)
}

// timeoutConfig serves quick (a hold function) and accuracy, with a
// request_timeout short enough for a test to wait for.
const timeoutConfig = `
functions:
  - name: quick
    kind: hold
  - name: accuracy
    kind: exact_match
    reference_field: answer
    extract: [none]
    normalize: [strip]
limits:
  request_timeout: 1s
`

// timeoutBatch are the completions of the batches the tests send, "hold"
// last (a span scores its rollouts in order: those before it are never
// held up behind it), and their reference answers ("" for none).
var (
	timeoutCompletions = []string{"1", "0", "0.5", "0.25", "hold"}
	timeoutAnswers     = []string{"1", "1", "0.5", "0.25", ""}
)

// timeoutRequest is a batch of timeoutCompletions in one group, their
// rewards summed then normalized.
func timeoutRequest() *rewardv1.ScoreRequest {
	req := &rewardv1.ScoreRequest{BatchId: "b", Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE}}
	for i, c := range timeoutCompletions {
		r := &rewardv1.Rollout{Group: "g", Completion: c}
		if timeoutAnswers[i] != "" {
			r.Fields = answerField(timeoutAnswers[i])
		}
		req.Rollouts = append(req.Rollouts, r)
	}
	return req
}

const timeoutReason = "not scored: the request ran past limits.request_timeout (1s)"

// TestRequestTimeoutKeepsFinishedScores: a batch still scoring when
// limits.request_timeout runs out is answered on every surface with the
// scores decided by then, the rest ERROR with a reason naming the limit and
// its value, as each surface answers an ERROR; a client whose own deadline
// passes first gets DEADLINE_EXCEEDED.
func TestRequestTimeoutKeepsFinishedScores(t *testing.T) {
	scored := new(sync.Map)
	kinds := builtin.Registry()
	kinds["hold"] = scorers.Kind(func(holdParams) (*hold, error) { return &hold{scored: scored}, nil })
	st := newStackWith(t, timeoutConfig, nil, kinds)

	timeouts := 0
	checkTimeouts := func(t *testing.T) {
		t.Helper()
		timeouts++
		if got := metricValue(t, st.httpURL, "rewardd_request_timeouts_total"); got != strconv.Itoa(timeouts) {
			t.Errorf("rewardd_request_timeouts_total = %s, want %d", got, timeouts)
		}
	}

	t.Run("Score", func(t *testing.T) {
		scored.Clear()
		resp, err := st.client.Score(context.Background(), timeoutRequest())
		if err != nil {
			t.Fatalf("Score: %v, want the scores decided within the request_timeout", err)
		}
		checkPartial(t, resp, scored)
		checkTimeouts(t)
	})
	t.Run("ScoreStream", func(t *testing.T) {
		scored.Clear()
		stream, err := st.client.ScoreStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(timeoutRequest()); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetErrorCode() != 0 {
			t.Fatalf("batch answered error %d %q, want its scores", resp.GetErrorCode(), resp.GetErrorMessage())
		}
		checkPartial(t, resp, scored)
		stream.CloseSend()
		checkTimeouts(t)
	})
	t.Run("HTTPScore", func(t *testing.T) {
		scored.Clear()
		body, _ := protojson.Marshal(timeoutRequest())
		code, out := post(t, st.httpURL+"/v1/score", body)
		if code != http.StatusOK {
			t.Fatalf("POST /v1/score: %d %s", code, out)
		}
		var resp rewardv1.ScoreResponse
		if err := protojson.Unmarshal(out, &resp); err != nil {
			t.Fatal(err)
		}
		checkPartial(t, &resp, scored)
		checkTimeouts(t)
	})
	t.Run("OpenRLHF", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"query": timeoutCompletions, "labels": timeoutAnswers})
		for _, query := range []string{"?unscorable=null", ""} {
			scored.Clear()
			code, out := post(t, st.httpURL+"/get_reward"+query, body)
			if code != http.StatusOK {
				t.Fatalf("POST /get_reward%s: %d %s", query, code, out)
			}
			var got struct {
				Rewards    []*float64                   `json:"rewards"`
				ExtraLogs  map[string][]*float64        `json:"extra_logs"`
				Errors     map[string]map[string]string `json:"errors"`
				Unscorable []int                        `json:"unscorable"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			last := len(timeoutCompletions) - 1
			for i, c := range timeoutCompletions {
				q := got.ExtraLogs["quick"][i]
				reason := got.Errors["quick"][strconv.Itoa(i)]
				_, done := scored.Load(c)
				switch {
				case done && (q == nil || *q != number(c)):
					t.Errorf("%s row %d: quick %v, want %s (it was scored)", query, i, q, c)
				case !done && (q != nil || !strings.Contains(reason, timeoutReason)):
					t.Errorf("%s row %d: quick %v, error %q, want null and %q", query, i, q, reason, timeoutReason)
				}
			}
			// The held row: quick ERROR, accuracy NOT_APPLICABLE (no
			// label), so no function scored it: null when asked, else
			// the default unscorable_reward, 0.
			if len(got.Unscorable) != 1 || got.Unscorable[0] != last {
				t.Errorf("%s: unscorable %v, want [%d]", query, got.Unscorable, last)
			}
			if r := got.Rewards[last]; query != "" && r != nil || query == "" && (r == nil || *r != 0) {
				t.Errorf("%s: reward of the held row %v, want %s", query, r, map[string]string{"?unscorable=null": "null", "": "0"}[query])
			}
			checkTimeouts(t)
		}
	})
	t.Run("NeMoGym", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{
			"responses_create_params": map[string]any{"input": "q"},
			"response":                map[string]any{"output": []any{map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "hold"}}}}},
			"answer":                  "hold",
		})
		code, out := post(t, st.httpURL+"/verify", body)
		if code != http.StatusOK {
			t.Fatalf("POST /verify: %d %s", code, out)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		// accuracy scored it (1: the answer is "hold"); quick did not.
		if got["reward"] != 1.0 || got["quick"] != nil || got["quick_outcome"] != "error" ||
			!strings.Contains(got["quick_error"].(string), timeoutReason) || got["accuracy"] != 1.0 {
			t.Errorf("POST /verify: %s, want reward 1 (accuracy's), quick null with an error naming the request_timeout", out)
		}
		checkTimeouts(t)
	})
	t.Run("ClientDeadline", func(t *testing.T) {
		// The client's own deadline passes first: it gets
		// DEADLINE_EXCEEDED, and the server's limit did not run out.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := st.client.Score(ctx, timeoutRequest())
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("Score with a deadline before the request_timeout: %v, want DEADLINE_EXCEEDED", err)
		}
		if got := metricValue(t, st.httpURL, "rewardd_request_timeouts_total"); got != strconv.Itoa(timeouts) {
			t.Errorf("rewardd_request_timeouts_total = %s after a client's deadline, want %d", got, timeouts)
		}
	})
}

// TestRequestTimeoutAfterASlowBody: an HTTP request whose body took
// longer than limits.write_timeout to arrive, then ran past
// limits.request_timeout, still gets its answer: the write deadline counts
// from the end of the body.
func TestRequestTimeoutAfterASlowBody(t *testing.T) {
	scored := new(sync.Map)
	kinds := builtin.Registry()
	kinds["hold"] = scorers.Kind(func(holdParams) (*hold, error) { return &hold{scored: scored}, nil })
	st := newStackWith(t, timeoutConfig+"  write_timeout: 1s\n  read_timeout: 10s\n", nil, kinds)

	body, _ := json.Marshal(map[string]any{"query": timeoutCompletions, "labels": timeoutAnswers})
	pr, pw := io.Pipe()
	var sending conc.WaitGroup
	sending.Go(func() {
		pw.Write(body[:10])
		time.Sleep(2 * time.Second) // over write_timeout, within read_timeout
		pw.Write(body[10:])
		pw.Close()
	})
	defer sending.Wait()
	resp, err := http.Post(st.httpURL+"/get_reward", "application/json", pr)
	if err != nil {
		t.Fatalf("POST /get_reward with a slow body: %v, want its answer", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	var got struct{ Rewards []*float64 }
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(out, &got) != nil || len(got.Rewards) != len(timeoutCompletions) {
		t.Errorf("POST /get_reward with a slow body: HTTP %d %s (%v), want the rewards", resp.StatusCode, out, err)
	}
}

func number(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// checkPartial checks a ScoreResponse to a timeoutBatch request that ran
// past the request_timeout: what quick scored (scored) and every score
// accuracy decided stand; quick's other entries, the held one among them,
// are ERROR naming the limit; rewards are the sum of each rollout's OK
// scores; a warning says what happened.
func checkPartial(t *testing.T, resp *rewardv1.ScoreResponse, scored *sync.Map) {
	t.Helper()
	fns := map[string]*rewardv1.FunctionScores{}
	for _, fs := range resp.GetFunctions() {
		fns[fs.GetName()] = fs
	}
	quick, acc := fns["quick"], fns["accuracy"]
	if quick == nil || acc == nil {
		t.Fatalf("answer %v: want quick and accuracy", resp)
	}
	finished := 0
	for i, c := range timeoutCompletions {
		_, done := scored.Load(c)
		st, v, reason := quick.GetStatus()[i], quick.GetValues()[i], quick.GetErrors()[int32(i)]
		switch {
		case done && (st != rewardv1.ScoreStatus_SCORE_STATUS_OK || v != number(c)):
			t.Errorf("rollout %d: quick %v %v %q, want OK %s (it was scored)", i, st, v, reason, c)
		case !done && (st != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || !math.IsNaN(v) || reason != timeoutReason):
			t.Errorf("rollout %d: quick %v %v %q, want ERROR %q", i, st, v, reason, timeoutReason)
		case done:
			finished++
		}
		// accuracy is fast: each of its entries was decided, or cut with
		// the same reason.
		ast, areason := acc.GetStatus()[i], acc.GetErrors()[int32(i)]
		if ast == rewardv1.ScoreStatus_SCORE_STATUS_OK {
			finished++
		} else if ast == rewardv1.ScoreStatus_SCORE_STATUS_ERROR && areason != timeoutReason {
			t.Errorf("rollout %d: accuracy ERROR %q", i, areason)
		}
	}
	if _, held := scored.Load("hold"); held || finished == 0 {
		t.Errorf("the held rollout scored (%v), or no score of %d entries decided within the request_timeout (%d)", held, 2*len(timeoutCompletions), finished)
	}
	for i, r := range resp.GetRewards() {
		sum, some := 0.0, false
		for _, fs := range resp.GetFunctions() {
			if v := fs.GetValues()[i]; !math.IsNaN(v) {
				sum, some = sum+v, true
			}
		}
		if some && r != sum || !some && !math.IsNaN(r) && r != 0 {
			t.Errorf("rollout %d: reward %v, want %v (the sum of its OK scores)", i, r, sum)
		}
	}
	if len(resp.GetRewards()) != len(timeoutCompletions) {
		t.Errorf("%d rewards, want %d", len(resp.GetRewards()), len(timeoutCompletions))
	}
	if w := strings.Join(resp.GetWarnings(), "\n"); !strings.Contains(w, "limits.request_timeout (1s)") {
		t.Errorf("warnings %q: none says the request ran past its request_timeout", w)
	}
}

// TestAgedConnectionAnswersItsCalls: a call still scoring when its gRPC
// connection reaches its age (Options.ConnectionAge; the server then asks
// the client to reconnect) is answered all the same, with every score its
// request_timeout (1s, five times the age) allowed: the age closes the
// connection to new calls, never to the calls it accepted.
func TestAgedConnectionAnswersItsCalls(t *testing.T) {
	scored := new(sync.Map)
	kinds := builtin.Registry()
	kinds["hold"] = scorers.Kind(func(holdParams) (*hold, error) { return &hold{scored: scored}, nil })
	cfg, err := config.Load("test.yml", []byte(timeoutConfig), kinds)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, server.Options{Config: cfg, Kinds: kinds, Workers: 2, ConnectionAge: 200 * time.Millisecond})
	client := rewardv1.NewRewardServiceClient(srv.Dial(t))
	start := time.Now()
	resp, err := client.Score(context.Background(), timeoutRequest())
	if err != nil {
		t.Fatalf("Score, held %v on a connection of age 200ms: %v", time.Since(start), err)
	}
	checkPartial(t, resp, scored)
}
