package server

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// fieldFunctions, fieldErrors and fieldReasons are the field numbers of
// ScoreResponse.functions, FunctionScores.errors and FunctionScores.reasons.
const (
	fieldFunctions = 2
	fieldErrors    = 4
	fieldReasons   = 6
)

// marshalResponse encodes resp into the buffer alloc returns (called once,
// with the size needed). The bytes decode to resp as proto.Marshal's would;
// they differ in two ways a parser does not see: each function's errors and
// reasons maps are written by hand, in rollout order, and the functions come after the
// response's other fields. protobuf-go encodes a map entry through
// reflection, two allocations to size it and two to write it, and with
// the reasons of OK scores a map may hold an entry per rollout: on 1,024
// GSM8K rollouts that was a third of the allocations of a call.
//
// resp is restored before marshalResponse returns.
func marshalResponse(resp *rewardv1.ScoreResponse, alloc func(size int) []byte) ([]byte, error) {
	fns := resp.Functions
	errs := make([]map[int32]string, len(fns))
	reasons := make([]map[int32]string, len(fns))
	sizes := make([]int, len(fns))
	resp.Functions = nil
	defer func() {
		resp.Functions = fns
		for k, fs := range fns {
			fs.Errors, fs.Reasons = errs[k], reasons[k]
		}
	}()
	for k, fs := range fns {
		errs[k], reasons[k] = fs.Errors, fs.Reasons
	}
	size := proto.Size(resp)
	for k, fs := range fns {
		fs.Errors, fs.Reasons = nil, nil
		sizes[k] = proto.Size(fs) + mapSize(fieldErrors, errs[k]) + mapSize(fieldReasons, reasons[k])
		size += protowire.SizeTag(fieldFunctions) + protowire.SizeBytes(sizes[k])
	}
	opts := proto.MarshalOptions{UseCachedSize: true}
	b, err := opts.MarshalAppend(alloc(size)[:0], resp)
	if err != nil {
		return nil, err
	}
	for k, fs := range fns {
		b = protowire.AppendTag(b, fieldFunctions, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizes[k]))
		if b, err = opts.MarshalAppend(b, fs); err != nil {
			return nil, err
		}
		b = appendMap(b, fieldErrors, errs[k])
		b = appendMap(b, fieldReasons, reasons[k])
	}
	if len(b) != size {
		return nil, fmt.Errorf("encoded %d bytes of a %d-byte response", len(b), size)
	}
	return b, nil
}

// mapSize is the size of m as the map field of FunctionScores numbered
// field.
func mapSize(field protowire.Number, m map[int32]string) int {
	n := 0
	for k, v := range m {
		n += protowire.SizeTag(field) + protowire.SizeBytes(entrySize(k, v))
	}
	return n
}

// entrySize is the size of one map entry message {1: key, 2: value}.
func entrySize(k int32, v string) int {
	return protowire.SizeTag(1) + protowire.SizeVarint(uint64(int64(k))) + protowire.SizeTag(2) + protowire.SizeBytes(len(v))
}

// appendMap appends m as the map field of FunctionScores numbered field,
// by rollout index.
func appendMap(b []byte, field protowire.Number, m map[int32]string) []byte {
	if len(m) == 0 {
		return b
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		b = protowire.AppendTag(b, field, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(entrySize(k, v)))
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(k)))
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, v)
	}
	return b
}
