package server

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/config"
)

// costShapes are requests of the shapes trainers send, and of shapes an
// attacker would choose to make the decoded request large.
func costShapes() map[string]*rewardv1.ScoreRequest {
	row := func(n, size int, fields func(i int) *structpb.Struct) *rewardv1.ScoreRequest {
		req := &rewardv1.ScoreRequest{}
		text := strings.Repeat("Step 1: think. ", size/15+1)[:size]
		for i := range n {
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Group: strconv.Itoa(i / 8), Completion: text, Fields: fields(i)})
		}
		return req
	}
	answer := func(i int) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(strconv.Itoa(i))}}
	}
	emptyLists := func(int) *structpb.Struct {
		vals := make([]*structpb.Value, 20000)
		for i := range vals {
			vals[i] = structpb.NewListValue(&structpb.ListValue{})
		}
		return &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewListValue(&structpb.ListValue{Values: vals})}}
	}
	manyKeys := func(int) *structpb.Struct {
		f := map[string]*structpb.Value{}
		for k := range 5000 {
			f[strconv.Itoa(k)] = structpb.NewNumberValue(float64(k))
		}
		return &structpb.Struct{Fields: f}
	}
	// The prompt-once form: 256 prompts of 8 rollouts, the answer a prompt
	// column, a per-rollout column, and a few rollouts with fields of their
	// own (a Struct each, merged).
	promptOnce := func(groups, g, size int) *rewardv1.ScoreRequest {
		req := &rewardv1.ScoreRequest{
			PromptFields:  []*rewardv1.FieldColumn{{Name: "answer"}},
			RolloutFields: []*rewardv1.FieldColumn{{Name: "completion_tokens"}},
		}
		text := strings.Repeat("Step 1: think. ", size/15+1)[:size]
		for p := range groups {
			req.Prompts = append(req.Prompts, "Question "+strconv.Itoa(p)+"? "+strings.Repeat("Some context. ", 20))
			req.PromptFields[0].Values = append(req.PromptFields[0].Values, structpb.NewStringValue(strconv.Itoa(p)))
			for i := range g {
				r := &rewardv1.Rollout{PromptIndex: uint32(p), Completion: text}
				if i == 0 {
					r.Fields = answer(i)
					r.Fields.Fields["own"] = r.Fields.Fields["answer"]
					delete(r.Fields.Fields, "answer")
				}
				req.Rollouts = append(req.Rollouts, r)
				req.RolloutFields[0].Values = append(req.RolloutFields[0].Values, structpb.NewNumberValue(float64(size/4)))
			}
		}
		return req
	}
	manyColumns := func() *rewardv1.ScoreRequest {
		req := promptOnce(512, 8, 1)
		for k := range 64 {
			c := &rewardv1.FieldColumn{Name: "c" + strconv.Itoa(k)}
			for range req.Prompts {
				c.Values = append(c.Values, structpb.NewBoolValue(true))
			}
			req.PromptFields = append(req.PromptFields, c)
		}
		return req
	}
	return map[string]*rewardv1.ScoreRequest{
		"prompt once 256 x 8 x 400 B":        promptOnce(256, 8, 400),
		"prompt once, 64+1 columns merged":   manyColumns(),
		"gsm8k-like 2048 x 400 B":            row(2048, 400, answer),
		"long 128 x 32 KiB":                  row(128, 32<<10, answer),
		"empty rollouts 20000":               row(20000, 0, func(int) *structpb.Struct { return nil }),
		"nested empty lists 4 x 20000":       row(4, 10, emptyLists),
		"many keys 4 x 5000":                 row(4, 10, manyKeys),
		"tiny completions, shared fields 4k": row(4096, 1, func(int) *structpb.Struct { return answer(1) }),
	}
}

// live is the heap in use after two collections (the second empties what
// the pools kept from the first).
func live() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestCostsBoundAllocations: what the admission reserves for a request
// (its copy, its decoded messages, the expansion of the prompt-once form,
// its scoring) bounds the memory the
// request holds once decoded and scored, over gRPC's codec and over JSON,
// for the shapes trainers send and for shapes that make the decoded tree
// many times larger than the message.
func TestCostsBoundAllocations(t *testing.T) {
	cfg, err := config.Load("t.yml", []byte(`functions:
  - {name: accuracy, kind: exact_match, reference_field: answer, extract: [answer_tag, last_number], normalize: [strip, numeric]}
  - {name: format, kind: format, tags: [think, answer]}
  - {name: steps, kind: regex, pattern: 'Step \d+:', mode: count, count_target: 3}
limits: {max_rollouts: 50000}
`), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc := srv.Service()
	tasks := len(cfg.Functions)
	for name, req := range costShapes() {
		wire, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		js, err := protojson.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		n := len(req.GetRollouts())
		expansion := expansionCost(req)
		req = nil

		// gRPC: the handler's copy, the decoded request, the scoring.
		before := live()
		in := new(rewardv1.ScoreRequest)
		b := append([]byte(nil), wire...) // grpcService.received's copy
		if err := decodeRequest(b, in, nil, nil); err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		resp, err := svc.Score(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		held := live() - before
		reserved := int64(len(wire)) + decodeCost(len(wire), protoShape(wire, nil)) + scoringCost(n, tasks) + expansion
		if held > reserved {
			t.Errorf("%s over gRPC: holds %d bytes, reserved %d", name, held, reserved)
		}
		t.Logf("%-36s gRPC: %6.1f MiB message, holds %6.1f MiB, reserves %6.1f MiB", name, float64(len(wire))/(1<<20), float64(held)/(1<<20), float64(reserved)/(1<<20))
		runtime.KeepAlive(resp)
		runtime.KeepAlive(in)
		in, resp, b = nil, nil, nil

		// JSON: the body, the decoded request, the scoring.
		before = live()
		body := append([]byte(nil), js...)
		var jreq rewardv1.ScoreRequest
		if err := protojson.Unmarshal(body, &jreq); err != nil {
			t.Fatal(err)
		}
		resp, err = svc.Score(context.Background(), &jreq)
		if err != nil {
			t.Fatal(err)
		}
		held = live() - before
		reserved = int64(len(body)) + decodeCost(len(body), jsonShape(body)) + scoringCost(n, tasks) + expansion
		if held > reserved {
			t.Errorf("%s over JSON: holds %d bytes, reserved %d", name, held, reserved)
		}
		t.Logf("%-36s JSON: %6.1f MiB body,    holds %6.1f MiB, reserves %6.1f MiB", name, float64(len(body))/(1<<20), float64(held)/(1<<20), float64(reserved)/(1<<20))
		runtime.KeepAlive(resp)
		runtime.KeepAlive(body)
		runtime.KeepAlive(&jreq)
	}
}
