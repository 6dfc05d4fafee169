package server

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server/jsonl"
)

// protoCodec is grpc's proto codec (newGRPCServer forces it on the server
// with grpc.ForceServerCodecV2) with three differences, all for the
// messages the server spends its time on:
//
//   - A ScoreRequest is decoded by decodeScoreRequest (proto.Unmarshal's
//     result with far fewer allocations: its strings are substrings of one
//     copy of the message), falling back to proto.Unmarshal for anything
//     unusual.
//   - A ScoreRequest that does not decode is not an error of the codec
//     (grpc would answer INTERNAL, which says the server is at fault): the
//     codec records why in its receipts, and the handler answers
//     INVALID_ARGUMENT. When a string field holds invalid UTF-8 the error
//     names the field and the offset, e.g. "rollouts[3].completion: invalid
//     UTF-8 at byte 17".
//   - A ScoreResponse is encoded by marshalResponse, which writes the
//     errors maps by hand, into a buffer of grpc's pool.
type protoCodec struct {
	encoding.CodecV2
	receipts *receipts
}

func newProtoCodec() protoCodec {
	return protoCodec{CodecV2: encoding.GetCodecV2("proto"), receipts: &receipts{m: make(map[*rewardv1.ScoreRequest]receipt)}}
}

// receipt is what the codec learned decoding one ScoreRequest that its
// handler needs: the message's size, the memory the decoded message holds,
// and why it does not decode (a *RequestError), if it does not.
type receipt struct {
	wire  int
	holds int64
	err   error
}

// receipts are the receipts of the ScoreRequests the codec decoded whose
// handler has not taken them yet. Every ScoreRequest the codec decodes is
// handed to a handler (grpc calls the unary handler once the message is
// decoded; ScoreStream receives its own), and each handler takes its
// message's receipt before anything else, so the map holds only the
// messages being handed over (TestReceiptsAreTaken).
type receipts struct {
	mu sync.Mutex
	m  map[*rewardv1.ScoreRequest]receipt
}

func (rs *receipts) put(req *rewardv1.ScoreRequest, r receipt) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.m[req] = r
}

// take returns req's receipt and forgets it. A message the codec did not
// decode (a caller within the process) has an empty receipt.
func (rs *receipts) take(req *rewardv1.ScoreRequest) receipt {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := rs.m[req]
	delete(rs.m, req)
	return r
}

// pending is how many receipts no handler has taken.
func (rs *receipts) pending() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.m)
}

func (c protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*rewardv1.ScoreRequest)
	if !ok {
		return c.fallback(data, v)
	}
	// Materialize copies the message into a buffer of its own, which the
	// decoded strings then share: the request holds its copy and what
	// decoding adds.
	b := data.Materialize()
	r := receipt{wire: len(b), holds: int64(len(b)) + decodeCost(len(b), protoShape(b))}
	if !decodeScoreRequest(b, req) {
		proto.Reset(req)
		if err := c.fallback(data, req); err != nil {
			r.err = invalid("the request does not decode as a reward.v1.ScoreRequest: %v", err)
		}
	}
	c.receipts.put(req, r)
	return nil
}

func (c protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	resp, ok := v.(*rewardv1.ScoreResponse)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	pool := mem.DefaultBufferPool()
	var buf *[]byte
	b, err := marshalResponse(resp, func(size int) []byte {
		buf = pool.Get(size)
		return *buf
	})
	if err != nil {
		if buf != nil {
			pool.Put(buf)
		}
		return nil, err
	}
	// grpc gives the buffer back to the pool once it is written.
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// fallback decodes with proto.Unmarshal, naming the field when a string is
// not UTF-8.
func (c protoCodec) fallback(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	if m, ok := v.(proto.Message); ok {
		if where := invalidUTF8(data.Materialize(), m.ProtoReflect().Descriptor(), ""); where != "" {
			return fmt.Errorf("%s (%w)", where, err)
		}
	}
	return err
}

// invalidUTF8 walks the wire encoding of a message of type md and returns
// where its first string field with invalid UTF-8 is, or "".
func invalidUTF8(b []byte, md protoreflect.MessageDescriptor, prefix string) string {
	seen := make(map[protowire.Number]int)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return ""
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if fd == nil {
			continue
		}
		name := prefix + string(fd.Name())
		if fd.IsList() || fd.IsMap() {
			name = fmt.Sprintf("%s[%d]", name, seen[num])
			seen[num]++
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			if !utf8.Valid(v) {
				return fmt.Sprintf("%s: invalid UTF-8 at byte %d", name, jsonl.FirstInvalidUTF8(v))
			}
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if where := invalidUTF8(v, fd.Message(), name+"."); where != "" {
				return where
			}
		}
	}
	return ""
}
