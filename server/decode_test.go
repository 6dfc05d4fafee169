package server

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

type decodeCase struct {
	name string
	wire []byte
	fast bool
}

// decodeCases are requests of every shape decodeScoreRequest meets, and
// whether it decodes them itself (fast) or leaves them to proto.Unmarshal.
func decodeCases(t testing.TB) []decodeCase {
	t.Helper()
	str := func(s string) *structpb.Value { return structpb.NewStringValue(s) }
	list, err := structpb.NewList([]any{"a", 1.5, true, nil, map[string]any{"k": []any{"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	typical := &rewardv1.ScoreRequest{
		BatchId:   "step-17",
		Functions: []string{"accuracy", "format"},
		Rollouts: []*rewardv1.Rollout{
			{Id: "0", Group: "g0", Prompt: "What is 2+2?", Completion: "<answer>4</answer>", Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"answer": str("4")}}},
			{Id: "0b", Group: "g0", Prompt: "What is 2+2?", Completion: "5", Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"answer": str("4")}}},
			{Id: "1", Group: "g0", Prompt: "What is 2+2?", Completion: "« 4 » ✓", Fields: &structpb.Struct{Fields: map[string]*structpb.Value{
				"answer": structpb.NewNumberValue(4), "nan": structpb.NewNumberValue(math.NaN()), "ok": structpb.NewBoolValue(true),
				"none": structpb.NewNullValue(), "tests": structpb.NewListValue(list), "": str(""), "empty": {},
			}}},
			{Completion: ""},
			{Id: "3", Fields: &structpb.Struct{}},
		},
		Inline: []*rewardv1.FunctionSpec{{Name: "r", Kind: "regex", Params: &structpb.Struct{Fields: map[string]*structpb.Value{"pattern": str(`\d+`)}}}},
		Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE,
			Weights: map[string]float64{"accuracy": 1, "format": 0.2}},
	}
	marshal := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	wire := marshal(typical)
	// A rollout (field 2) whose fields struct (field 5) comes twice: the
	// second merges into the first, which decodeScoreRequest leaves to
	// proto.Unmarshal (its first could be shared with the rollout before).
	twice := protowire.AppendTag(nil, 2, protowire.BytesType)
	var r []byte
	r = protowire.AppendTag(r, 4, protowire.BytesType)
	r = protowire.AppendString(r, "c")
	for _, k := range []string{"a", "b"} {
		r = protowire.AppendTag(r, 5, protowire.BytesType)
		r = protowire.AppendBytes(r, marshal(&structpb.Struct{Fields: map[string]*structpb.Value{k: str(k)}}))
	}
	twice = protowire.AppendBytes(twice, r)
	unknown := protowire.AppendTag(append([]byte(nil), wire...), 99, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 1)
	badUTF8 := marshal(&rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "ok"}}})
	badUTF8 = append(badUTF8, protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType),
		protowire.AppendString(protowire.AppendTag(nil, 4, protowire.BytesType), "bad \xff"))...)
	promptOnce := marshal(&rewardv1.ScoreRequest{
		Prompts: []string{"What is 2+2?", "Name a prime."},
		Rollouts: []*rewardv1.Rollout{
			{Id: "0", Completion: "<answer>4</answer>"}, {Id: "1", Completion: "5"},
			{Id: "2", Completion: "7", PromptIndex: 1}, {Id: "3", Completion: "« 2 » ✓", PromptIndex: 1, Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"own": str("x")}}},
		},
		PromptFields: []*rewardv1.FieldColumn{
			{Name: "answer", Values: []*structpb.Value{str("4"), structpb.NewListValue(list)}},
			{Name: "level", Values: []*structpb.Value{structpb.NewNumberValue(1), structpb.NewNullValue()}},
		},
		RolloutFields: []*rewardv1.FieldColumn{{Name: "completion_tokens", Values: []*structpb.Value{
			structpb.NewNumberValue(5), structpb.NewNumberValue(1), structpb.NewNumberValue(1), structpb.NewNumberValue(3)}}},
	})
	// A prompt_index beyond 32 bits: truncated, as proto.Unmarshal does.
	wide := protowire.AppendTag(nil, 2, protowire.BytesType)
	wide = protowire.AppendBytes(wide, protowire.AppendVarint(protowire.AppendTag(nil, 6, protowire.VarintType), 1<<32+3))
	return []decodeCase{
		{"typical", wire, true},
		{"prompt once, fields as columns", promptOnce, true},
		{"prompt index over 32 bits", wide, true},
		{"empty", nil, true},
		{"ok reasons omitted", marshal(&rewardv1.ScoreRequest{OmitOkReasons: true, Rollouts: []*rewardv1.Rollout{{Completion: "4"}}}), true},
		// A bool is any varint; proto.Unmarshal reads 2 as true.
		{"omit_ok_reasons as 2", protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 2), true},
		{"reasons as lists", marshal(&rewardv1.ScoreRequest{ReasonsAsLists: true, OmitOkReasons: true, Rollouts: []*rewardv1.Rollout{{Completion: "4"}}}), true},
		{"batch id twice", append(marshal(&rewardv1.ScoreRequest{BatchId: "a"}), marshal(&rewardv1.ScoreRequest{BatchId: "b"})...), true},
		{"fields twice", twice, false},
		{"unknown field", unknown, false},
		{"invalid UTF-8", badUTF8, false},
		{"truncated", wire[:len(wire)/2], false},
	}
}

// TestDecodeSharesGroupFields: a rollout whose fields are the same bytes as
// the previous rollout's shares its decoded Struct; others get their own.
func TestDecodeSharesGroupFields(t *testing.T) {
	answer := func(a string) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(a)}}
	}
	req := &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{
		{Completion: "a", Fields: answer("4")}, {Completion: "b", Fields: answer("4")}, {Completion: "c", Fields: answer("4")},
		{Completion: "d", Fields: answer("5")}, {Completion: "e"}, {Completion: "f", Fields: answer("5")}, {Completion: "g", Fields: answer("4")},
	}}
	wire, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var got rewardv1.ScoreRequest
	if !decodeScoreRequest(wire, &got, nil, nil) {
		t.Fatal("not decoded by decodeScoreRequest")
	}
	if !proto.Equal(&got, req) {
		t.Fatalf("decoded %v, want %v", &got, req)
	}
	f := func(i int) *structpb.Struct { return got.Rollouts[i].Fields }
	for _, c := range []struct {
		i, j  int
		share bool
	}{{0, 1, true}, {0, 2, true}, {2, 3, false}, {3, 5, true}, {5, 6, false}, {0, 6, false}} {
		if (f(c.i) == f(c.j)) != c.share {
			t.Errorf("rollouts %d and %d share their fields: %v, want %v", c.i, c.j, f(c.i) == f(c.j), c.share)
		}
	}
}

// TestDecodeScoreRequest: whatever decodeScoreRequest decodes equals what
// proto.Unmarshal decodes from the same bytes, and it decodes the shapes
// trainers send itself rather than leaving them to the slow path.
func TestDecodeScoreRequest(t *testing.T) {
	for _, c := range decodeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var want rewardv1.ScoreRequest
			wantErr := proto.Unmarshal(c.wire, &want)
			var got rewardv1.ScoreRequest
			fast := decodeScoreRequest(append([]byte(nil), c.wire...), &got, nil, nil)
			if fast != c.fast {
				t.Fatalf("decoded itself: %v, want %v (proto.Unmarshal: %v)", fast, c.fast, wantErr)
			}
			if fast && (wantErr != nil || !proto.Equal(&got, &want)) {
				t.Fatalf("decoded\n%v\nproto.Unmarshal: %v\n%v", &got, wantErr, &want)
			}
		})
	}
}

// FuzzDecodeScoreRequest: on any bytes, decodeScoreRequest either declines
// or gives exactly what proto.Unmarshal gives; it never accepts what
// proto.Unmarshal refuses. It decodes in call memory that the previous
// inputs were decoded in and released, as a server's calls do.
func FuzzDecodeScoreRequest(f *testing.F) {
	for _, c := range decodeCases(f) {
		f.Add(c.wire)
	}
	pool := new(memoryPool)
	f.Fuzz(func(t *testing.T, wire []byte) {
		var want rewardv1.ScoreRequest
		wantErr := proto.Unmarshal(wire, &want)
		var got rewardv1.ScoreRequest
		cm := pool.get()
		defer cm.release()
		b, _ := cm.copyWire(mem.BufferSlice{mem.SliceBuffer(wire)}, nil) // no pacer: no error
		if !decodeScoreRequest(b, &got, cm, nil) {
			return
		}
		if wantErr != nil {
			t.Fatalf("decoded %x, which proto.Unmarshal refuses: %v", wire, wantErr)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("%x decoded as\n%v\nproto.Unmarshal:\n%v", wire, &got, &want)
		}
	})
}

// BenchmarkDecodeScoreRequest compares decodeScoreRequest with
// proto.Unmarshal on a request shaped like the bench's gsm8k load: 1,024
// rollouts of ~300 bytes with an answer field, and in the prompt-once form
// (decoded, then expanded).
//
//	go test -run XXX -bench DecodeScoreRequest -benchmem ./server/
func BenchmarkDecodeScoreRequest(b *testing.B) {
	req := &rewardv1.ScoreRequest{BatchId: "b", Functions: []string{"accuracy", "format", "tag_count"}}
	for i := range 1024 {
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{
			Id: fmt.Sprint(i), Group: fmt.Sprint(i / 8), Prompt: strings.Repeat("How many apples? ", 10),
			Completion: strings.Repeat("<think>step</think> ", 15) + "<answer>42</answer>",
			Fields:     &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(fmt.Sprintf("Natalia sold 48/2 = 24 clips.\n#### %d", i/8))}},
		})
	}
	wire, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proto.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m rewardv1.ScoreRequest
			if err := proto.Unmarshal(wire, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same batch with each prompt and answer once (the prompt-once
	// form), decoded and expanded as Service.score does.
	once := &rewardv1.ScoreRequest{BatchId: "b", Functions: req.Functions, PromptFields: []*rewardv1.FieldColumn{{Name: "answer"}}}
	for i, r := range req.Rollouts {
		if i%8 == 0 {
			once.Prompts = append(once.Prompts, r.Prompt)
			once.PromptFields[0].Values = append(once.PromptFields[0].Values, r.Fields.Fields["answer"])
		}
		once.Rollouts = append(once.Rollouts, &rewardv1.Rollout{Id: r.Id, Group: r.Group, Completion: r.Completion, PromptIndex: uint32(i / 8)})
	}
	onceWire, err := proto.Marshal(once)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		wire []byte
	}{{"decodeScoreRequest", wire}, {"decodeScoreRequest+expand/prompt-once", onceWire}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m rewardv1.ScoreRequest
				// The codec decodes a copy of grpc's bytes.
				if !decodeScoreRequest(append([]byte(nil), c.wire...), &m, nil, nil) {
					b.Fatal("declined")
				}
				if err := expand(&m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(c.wire)), "wire-B")
		})
	}
}
