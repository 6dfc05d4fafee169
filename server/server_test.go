package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/servertest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/scorertest"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

const testConfig = `
functions:
  - name: accuracy
    kind: exact_match
    reference_field: answer
    extract: [boxed, answer_tag, gsm8k, last_number]
    normalize: [strip, numeric]
  - name: format
    kind: format
    tags: [think, answer]
  - name: steps
    kind: regex
    pattern: '<<[^>]*>>'
    mode: count
    count_target: 2
limits:
  max_rollouts: 5000
  max_completion_bytes: 4096
`

// stack is a server with every transport, over real connections: gRPC on
// bufconn, HTTP on a loopback socket.
type stack struct {
	client   rewardv1.RewardServiceClient
	conn     *grpc.ClientConn
	httpURL  string
	registry *prometheus.Registry
}

func newStack(t *testing.T, configYAML string) *stack {
	t.Helper()
	return newStackAuth(t, configYAML, nil)
}

// newStackAuth is newStack with auth (nil for none) on both transports.
func newStackAuth(t *testing.T, configYAML string, auth *server.Auth) *stack {
	t.Helper()
	return newStackWith(t, configYAML, auth, builtin.Registry())
}

// newStackWith is newStack with auth and the registry of kinds.
func newStackWith(t *testing.T, configYAML string, auth *server.Auth, kinds scorers.Registry) *stack {
	t.Helper()
	cfg, err := config.Load("test.yml", []byte(configYAML), kinds)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, server.Options{Config: cfg, Kinds: kinds, Workers: 2, Auth: auth})
	conn := srv.Dial(t, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	return &stack{client: rewardv1.NewRewardServiceClient(conn), conn: conn, httpURL: srv.HTTPURL, registry: srv.Metrics()}
}

type gsm8kRow struct{ Question, Answer string }

// gsm8k reads the shared GSM8K test set.
func gsm8k(t testing.TB) []gsm8kRow {
	t.Helper()
	return scorertest.ReadJSONL[gsm8kRow](t, "../../shared/data/gsm8k_test.jsonl")
}

// goldNumber returns the number after "#### " in a GSM8K answer.
func goldNumber(answer string) string {
	_, n, _ := strings.Cut(answer, "#### ")
	return strings.TrimSpace(n)
}

func answerField(v string) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(v)}}
}

// TestScoreGSM8K scores every GSM8K gold solution against its own answer
// (1.0), the same solutions with the final number changed (0.0), and rows
// without a reference (NOT_APPLICABLE, never 0).
func TestScoreGSM8K(t *testing.T) {
	st := newStack(t, testConfig)
	rows := gsm8k(t)
	req := &rewardv1.ScoreRequest{BatchId: "gsm8k", Functions: []string{"accuracy"}}
	for i, r := range rows {
		gold := goldNumber(r.Answer)
		wrong := strings.Replace(r.Answer, "#### "+gold, "#### "+gold+"1", 1)
		req.Rollouts = append(req.Rollouts,
			&rewardv1.Rollout{Id: fmt.Sprint(i, "-right"), Completion: r.Answer, Fields: answerField(gold)},
			&rewardv1.Rollout{Id: fmt.Sprint(i, "-wrong"), Completion: wrong, Fields: answerField(gold)},
			&rewardv1.Rollout{Id: fmt.Sprint(i, "-noref"), Completion: r.Answer},
		)
	}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetBatchId() != "gsm8k" || len(resp.GetFunctions()) != 1 {
		t.Fatalf("response: batch %q, %d functions", resp.GetBatchId(), len(resp.GetFunctions()))
	}
	acc := resp.GetFunctions()[0]
	for i := range rows {
		right, wrong, noref := 3*i, 3*i+1, 3*i+2
		if acc.Status[right] != rewardv1.ScoreStatus_SCORE_STATUS_OK || acc.Values[right] != 1 {
			t.Errorf("row %d gold solution: %v %v (%s), want OK 1", i, acc.Status[right], acc.Values[right], acc.Errors[int32(right)])
		}
		if acc.Status[wrong] != rewardv1.ScoreStatus_SCORE_STATUS_OK || acc.Values[wrong] != 0 {
			t.Errorf("row %d changed answer: %v %v, want OK 0", i, acc.Status[wrong], acc.Values[wrong])
		}
		if acc.Status[noref] != rewardv1.ScoreStatus_SCORE_STATUS_NOT_APPLICABLE || !math.IsNaN(acc.Values[noref]) || acc.Reasons[int32(noref)] == "" || acc.Errors[int32(noref)] != "" {
			t.Errorf("row %d without reference: %v %v, want NOT_APPLICABLE NaN with a reason in reasons, none in errors", i, acc.Status[noref], acc.Values[noref])
		}
	}
}

func TestScoreAllFunctionsAndInline(t *testing.T) {
	st := newStack(t, testConfig)
	completion := "<think>2 + 2 = <<2+2=4>>4, and <<4*1=4>>4</think><answer>4</answer>"
	req := &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{
		{Completion: completion, Fields: answerField("4")},
		{Completion: "no idea", Fields: answerField("4")},
	}}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, fs := range resp.GetFunctions() {
		got[fs.GetName()] = fs.GetValues()
	}
	want := map[string][]float64{"accuracy": {1, 0}, "format": {1, 0}, "steps": {1, 0}}
	for name, w := range want {
		if fmt.Sprint(got[name]) != fmt.Sprint(w) {
			t.Errorf("%s = %v, want %v", name, got[name], w)
		}
	}
	if resp.GetConfigFingerprint() == "" {
		t.Error("no config fingerprint in the response")
	}

	// Served functions by name, then an inline one.
	params, _ := structpb.NewStruct(map[string]any{"pattern": "^<think>", "mode": "search"})
	req.Functions = []string{"format"}
	req.Inline = []*rewardv1.FunctionSpec{{Name: "starts_thinking", Kind: "regex", Params: params}}
	resp, err = st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetFunctions()); n != 2 || resp.Functions[1].GetName() != "starts_thinking" || fmt.Sprint(resp.Functions[1].Values) != "[1 0]" {
		t.Errorf("inline function: %v", resp.GetFunctions())
	}
}

// TestBadRequests sends each kind of bad input and checks the status code,
// that the message names what is wrong, and that the server keeps serving.
func TestBadRequests(t *testing.T) {
	st := newStack(t, testConfig)
	ctx := context.Background()
	many := make([]*rewardv1.Rollout, 5001)
	for i := range many {
		many[i] = &rewardv1.Rollout{Completion: "x"}
	}
	badRegex, _ := structpb.NewStruct(map[string]any{"pattern": "(unclosed"})
	unknownKey, _ := structpb.NewStruct(map[string]any{"pattern": "x", "modee": "count"})
	both, _ := structpb.NewStruct(map[string]any{"pattern": "(unclosed", "modee": "count"})
	cases := []struct {
		name     string
		req      *rewardv1.ScoreRequest
		code     codes.Code
		mentions string
	}{
		{"oversized batch", &rewardv1.ScoreRequest{Rollouts: many}, codes.InvalidArgument, "max_rollouts"},
		{"unknown function", &rewardv1.ScoreRequest{Functions: []string{"acuracy"}}, codes.NotFound, "acuracy"},
		{"function twice", &rewardv1.ScoreRequest{Functions: []string{"format", "format"}}, codes.InvalidArgument, "format"},
		{"inline bad regex", &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: "r", Kind: "regex", Params: badRegex}}}, codes.InvalidArgument, "(unclosed"},
		{"inline unknown key", &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: "r", Kind: "regex", Params: unknownKey}}}, codes.InvalidArgument, "modee"},
		{"inline bad regex and unknown key", &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: "r", Kind: "regex", Params: both}}}, codes.InvalidArgument, `modee: unknown key (known keys: count_target, flags, mode, pattern, pattern_field); pattern: compile "(unclosed"`},
		{"inline unknown kind", &rewardv1.ScoreRequest{Inline: []*rewardv1.FunctionSpec{{Name: "r", Kind: "llm"}}}, codes.InvalidArgument, "llm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := st.client.Score(ctx, c.req)
			s := status.Convert(err)
			if s.Code() != c.code || !strings.Contains(s.Message(), c.mentions) {
				t.Errorf("got %v %q, want %v naming %q", s.Code(), s.Message(), c.code, c.mentions)
			}
		})
	}

	// An oversized completion fails only its own rollout, in every function.
	req := &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{
		{Completion: "<answer>4</answer>", Fields: answerField("4")},
		{Completion: strings.Repeat("x", 4097), Fields: answerField("4")},
		{Completion: "<answer>5</answer>", Fields: answerField("4")},
	}}
	resp, err := st.client.Score(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range resp.GetFunctions() {
		if fs.Status[1] != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || !strings.Contains(fs.Errors[1], "max_completion_bytes") {
			t.Errorf("%s rollout 1: %v %q, want ERROR naming max_completion_bytes", fs.Name, fs.Status[1], fs.Errors[1])
		}
		if fs.Status[0] == rewardv1.ScoreStatus_SCORE_STATUS_ERROR || fs.Status[2] == rewardv1.ScoreStatus_SCORE_STATUS_ERROR {
			t.Errorf("%s: the good rollouts were lost: %v", fs.Name, fs.Status)
		}
	}
	if acc := resp.Functions[0]; acc.Values[0] != 1 || acc.Values[2] != 0 {
		t.Errorf("accuracy = %v, want [1 NaN 0]", acc.Values)
	}
}

// rawCodec sends pre-encoded bytes, so a test can put invalid UTF-8 in a
// string field the way a buggy client in another language might.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return proto.Marshal(v.(proto.Message))
}
func (rawCodec) Unmarshal(data []byte, v any) error { return proto.Unmarshal(data, v.(proto.Message)) }
func (rawCodec) Name() string                       { return "proto" }

func TestInvalidUTF8(t *testing.T) {
	st := newStack(t, testConfig)
	good, _ := proto.Marshal(&rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "AAAA"}}})
	bad := bytes.Replace(good, []byte("AAAA"), []byte("A\xffAA"), 1)
	var resp rewardv1.ScoreResponse
	err := st.conn.Invoke(context.Background(), "/reward.v1.RewardService/Score", bad, &resp, grpc.ForceCodec(rawCodec{}))
	if s := status.Convert(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "rollouts[0].completion: invalid UTF-8 at byte 1") {
		t.Errorf("gRPC: got %v %q, want INVALID_ARGUMENT naming the field and invalid UTF-8", s.Code(), s.Message())
	}
	// Bytes that are not a message at all are the client's mistake too.
	err = st.conn.Invoke(context.Background(), "/reward.v1.RewardService/Score", good[:len(good)-1], &resp, grpc.ForceCodec(rawCodec{}))
	if s := status.Convert(err); s.Code() != codes.InvalidArgument {
		t.Errorf("gRPC, truncated: got %v %q, want INVALID_ARGUMENT", s.Code(), s.Message())
	}
	// On a stream, the stream ends with INVALID_ARGUMENT after answering
	// what came before.
	stream, err := st.conn.NewStream(context.Background(), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true},
		"/reward.v1.RewardService/ScoreStream", grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := proto.Marshal(&rewardv1.ScoreRequest{BatchId: "first", Rollouts: []*rewardv1.Rollout{{Completion: "ok"}}})
	if err := stream.SendMsg(first); err != nil {
		t.Fatal(err)
	}
	if err := stream.RecvMsg(&resp); err != nil || resp.GetBatchId() != "first" {
		t.Fatalf("stream, first batch: %v %v", &resp, err)
	}
	if err := stream.SendMsg(bad); err != nil {
		t.Fatal(err)
	}
	err = stream.RecvMsg(&resp)
	if s := status.Convert(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "invalid UTF-8") {
		t.Errorf("stream: got %v %q, want INVALID_ARGUMENT naming invalid UTF-8", s.Code(), s.Message())
	}
	// Over HTTP the byte offset is named too.
	body := []byte(`{"rollouts":[{"completion":"A` + "\xff" + `"}]}`)
	code, out := post(t, st.httpURL+"/v1/score", body)
	if code != http.StatusBadRequest || !strings.Contains(string(out), "UTF-8") {
		t.Errorf("HTTP: %d %s, want 400 naming invalid UTF-8", code, out)
	}
	// And the server still serves.
	if _, err := st.client.Score(context.Background(), &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "ok"}}}); err != nil {
		t.Errorf("after bad input: %v", err)
	}
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	return readResponse(t)(http.Get(url))
}

func post(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	return readResponse(t)(http.Post(url, "application/json", bytes.NewReader(body)))
}

// readResponse returns a function that reads a response's status and body,
// failing t on an error.
func readResponse(t *testing.T) func(*http.Response, error) (int, []byte) {
	return func(resp *http.Response, err error) (int, []byte) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
}

// TestHTTPMatchesGRPC posts the same request as JSON and checks the numbers
// equal the gRPC answer.
func TestHTTPMatchesGRPC(t *testing.T) {
	st := newStack(t, testConfig)
	req := &rewardv1.ScoreRequest{BatchId: "b1"}
	for i, r := range gsm8k(t)[:200] {
		c := r.Answer
		if i%3 == 0 {
			c = "<think>hmm</think><answer>" + goldNumber(r.Answer) + "</answer>"
		}
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Completion: c, Fields: answerField(goldNumber(r.Answer))})
	}
	want, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	code, out := post(t, st.httpURL+"/v1/score", body)
	if code != http.StatusOK {
		t.Fatalf("POST /v1/score: %d %s", code, out)
	}
	var got rewardv1.ScoreResponse
	if err := protojson.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Errorf("HTTP and gRPC answers differ")
	}

	for name, bad := range map[string]string{
		"not JSON":      `{"rollouts": [`,
		"unknown field": `{"rollouts": [{"completions": "x"}]}`,
		"wrong type":    `{"rollouts": [{"completion": 5}]}`,
	} {
		code, out := post(t, st.httpURL+"/v1/score", []byte(bad))
		var s struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(out, &s); err != nil || code != http.StatusBadRequest || s.Code != int(codes.InvalidArgument) || s.Message == "" {
			t.Errorf("%s: %d %s, want 400 with a google.rpc.Status body", name, code, out)
		}
	}
}

func TestHealthReflectionListFunctions(t *testing.T) {
	st := newStack(t, testConfig)
	ctx := context.Background()
	h, err := healthpb.NewHealthClient(st.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "reward.v1.RewardService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v %v", h, err)
	}

	stream, err := reflectionpb.NewServerReflectionClient(st.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for _, s := range r.GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
	}
	stream.CloseSend()
	if !strings.Contains(strings.Join(services, " "), "reward.v1.RewardService") {
		t.Errorf("reflection lists %v, want reward.v1.RewardService", services)
	}

	lf, err := st.client.ListFunctions(ctx, &rewardv1.ListFunctionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range lf.GetFunctions() {
		names = append(names, f.GetName()+":"+f.GetKind())
	}
	if fmt.Sprint(names) != "[accuracy:exact_match format:format steps:regex]" || !strings.HasPrefix(lf.GetConfigFingerprint(), "sha256:") {
		t.Errorf("ListFunctions: %v %q", names, lf.GetConfigFingerprint())
	}
	// Each function shows the parameters it runs with, the defaults the
	// config leaves out included.
	for i, want := range []string{"tolerance: 0", "mode: strict", "mode: count"} {
		if i < len(lf.GetFunctions()) && !strings.Contains(lf.GetFunctions()[i].GetParamsYaml(), want) {
			t.Errorf("ListFunctions: %s's parameters lack %q:\n%s", names[i], want, lf.GetFunctions()[i].GetParamsYaml())
		}
	}

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
		resp, err := http.Get(st.httpURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestMetrics checks the metric names against Prometheus' linter and that a
// request is counted.
func TestMetrics(t *testing.T) {
	st := newStack(t, testConfig)
	if _, err := st.client.Score(context.Background(), &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "x"}}}); err != nil {
		t.Fatal(err)
	}
	st.client.Score(context.Background(), &rewardv1.ScoreRequest{Functions: []string{"nope"}})
	problems, err := testutil.GatherAndLint(st.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s: %s", p.Metric, p.Text)
	}
	mfs, err := st.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
		if !strings.HasPrefix(mf.GetName(), "rewardd_") {
			t.Errorf("metric %s lacks the rewardd_ prefix", mf.GetName())
		}
	}
	for _, name := range []string{"rewardd_requests_total", "rewardd_request_duration_seconds", "rewardd_rollouts_scored_total",
		"rewardd_function_duration_seconds", "rewardd_function_outcomes_total", "rewardd_pool_inflight",
		"rewardd_pool_capacity", "rewardd_pool_queue_wait_seconds", "rewardd_pool_rejected_total"} {
		if !seen[name] {
			t.Errorf("metric %s missing", name)
		}
	}
	if n, _ := testutil.GatherAndCount(st.registry, "rewardd_requests_total"); n < 2 {
		t.Errorf("rewardd_requests_total has %d series, want OK and NotFound at least", n)
	}
}

// TestGroupKind scores Kimi's group-relative length reward through a real
// request: each rollout's value depends on the others of its group.
func TestGroupKind(t *testing.T) {
	st := newStack(t, testConfig)
	params, _ := structpb.NewStruct(map[string]any{"mode": "kimi", "unit": "chars", "correct_field": "correct"})
	row := func(group string, n int) *rewardv1.Rollout {
		return &rewardv1.Rollout{Group: group, Completion: strings.Repeat("x", n),
			Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"correct": structpb.NewBoolValue(true)}}}
	}
	req := &rewardv1.ScoreRequest{
		Inline:   []*rewardv1.FunctionSpec{{Name: "kimi", Kind: "length", Params: params}},
		Rollouts: []*rewardv1.Rollout{row("a", 10), row("b", 5), row("a", 20), row("a", 30), row("b", 15)},
	}
	resp, err := st.client.Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Kimi: λ = 0.5 − (len − min)/(max − min) within the group, for correct answers.
	if got := fmt.Sprint(resp.GetFunctions()[0].GetValues()); got != "[0.5 0.5 0 -0.5 -0.5]" {
		t.Errorf("kimi values %s, want [0.5 0.5 0 -0.5 -0.5]", got)
	}
}

// TestRequestsKeepTheirStrings sends many different requests at once. A
// Score request's strings live in a buffer that the next request reuses, so
// this checks that every answer, and every error, quotes its own request:
// batch_id, an inline function's name, an unknown function's name, and
// values that depend on the request's completions. The requests differ in
// size, as the rollouts and results a call scores in are reused too
// (Service.scratch). With as many clients as
// the stack admits requests (8), it also checks that a request gives its
// admission slot back before its answer goes out, failed ones included: a
// client's next request must never be refused for its previous one.
func TestRequestsKeepTheirStrings(t *testing.T) {
	st := newStack(t, testConfig)
	ctx := context.Background()
	const clients, each = 8, 150
	errs := make(chan error, clients*each)
	var wg conc.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for k := range each {
				id := fmt.Sprintf("c%d-k%d-%s", c, k, strings.Repeat("z", (c*each+k)%17))
				if k%5 == 4 {
					// An unknown function: the error quotes its name.
					name := "missing_" + id
					_, err := st.client.Score(ctx, &rewardv1.ScoreRequest{BatchId: id, Functions: []string{name},
						Rollouts: []*rewardv1.Rollout{{Completion: id}}})
					if s := status.Convert(err); s.Code() != codes.NotFound || !strings.Contains(s.Message(), name) {
						errs <- fmt.Errorf("%s: got %v %q, want NotFound naming %q", id, s.Code(), s.Message(), name)
					}
					continue
				}
				// The inline regex matches the rollouts whose completion
				// holds this request's id: every even one.
				params, _ := structpb.NewStruct(map[string]any{"pattern": regexp.QuoteMeta(id), "mode": "search"})
				name := "has_" + strings.ReplaceAll(id, "-", "_")
				req := &rewardv1.ScoreRequest{BatchId: id, Functions: []string{"accuracy"},
					Inline: []*rewardv1.FunctionSpec{{Name: name, Kind: "regex", Params: params}}}
				want := make([]float64, 16+(c*each+k)%49)
				for i := range want {
					completion := fmt.Sprintf("other %d <answer>%d</answer>", i, i)
					if i%2 == 0 {
						completion = fmt.Sprintf("%s %d <answer>%d</answer>", id, i, i)
						want[i] = 1
					}
					req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Id: fmt.Sprint(id, "/", i), Completion: completion, Fields: answerField(fmt.Sprint(i + k%2))})
				}
				resp, err := st.client.Score(ctx, req)
				if err != nil {
					errs <- fmt.Errorf("%s: %v", id, err)
					continue
				}
				if resp.GetBatchId() != id || len(resp.GetFunctions()) != 2 || resp.Functions[1].GetName() != name ||
					len(resp.Functions[0].GetValues()) != len(want) || len(resp.Functions[1].GetValues()) != len(want) {
					var names []string
					for _, fs := range resp.GetFunctions() {
						names = append(names, fs.GetName())
					}
					errs <- fmt.Errorf("%s: answer for batch %q with functions %q", id, resp.GetBatchId(), names)
					continue
				}
				acc := float64(1 - k%2)
				for i, v := range resp.Functions[1].GetValues() {
					if v != want[i] || resp.Functions[0].Values[i] != acc {
						errs <- fmt.Errorf("%s rollout %d: %s = %v, accuracy = %v; want %v and %v", id, i, name, v, resp.Functions[0].Values[i], want[i], acc)
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNewOptions: Options needs a Config and nothing else: the zero fields
// give GOMAXPROCS workers, the built-in kinds and a registry of the
// server's own; the server is ready until Shutdown, which ends Serve.
func TestNewOptions(t *testing.T) {
	if _, err := server.New(server.Options{}); err == nil || !strings.Contains(err.Error(), "Config") {
		t.Errorf("New without a Config: %v, want an error naming Config", err)
	}
	cfg, err := config.Load("test.yml", []byte(testConfig), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("# HELP rewardd_pool_capacity Worker pool slots in all (--workers); with --worker-nice, heavy requests have as many again at the lower CPU priority.\n# TYPE rewardd_pool_capacity gauge\nrewardd_pool_capacity %d\n", runtime.GOMAXPROCS(0))
	if err := testutil.GatherAndCompare(srv.Metrics(), strings.NewReader(want), "rewardd_pool_capacity"); err != nil {
		t.Errorf("the pool is not GOMAXPROCS workers: %v", err)
	}
	params, _ := structpb.NewStruct(map[string]any{"tags": []any{"answer"}})
	resp, err := srv.Service().Score(context.Background(), &rewardv1.ScoreRequest{
		Inline:   []*rewardv1.FunctionSpec{{Name: "has_answer", Kind: "format", Params: params}},
		Rollouts: []*rewardv1.Rollout{{Completion: "<answer>4</answer>"}},
	})
	if err != nil || resp.GetFunctions()[0].GetValues()[0] != 1 {
		t.Fatalf("an inline function of a built-in kind: %v, %v", resp, err)
	}
	readyz := func() int {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if code := readyz(); code != http.StatusOK {
		t.Errorf("/readyz before Serve: %d, want 200", code)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis, nil) }()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown with nothing in flight: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Shutdown: %v, want nil", err)
	}
	if code := readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after Shutdown: %d, want 503", code)
	}
}
