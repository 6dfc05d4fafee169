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

// protoCodec is grpc's proto codec with three differences. A ScoreRequest,
// the message the server spends its time on, is decoded by
// decodeScoreRequest (proto.Unmarshal's result, with far fewer
// allocations), falling back to proto.Unmarshal for anything unusual. A
// request that does not decode reaches its handler as an INVALID_ARGUMENT
// error (see scoreRequest) rather than grpc's INTERNAL. And when a message
// does not decode because a string field holds invalid UTF-8 (which proto3
// forbids, and which a buggy client can still send), the error names the
// field and the offset, e.g. "rollouts[3].completion: invalid UTF-8 at byte
// 17", instead of only saying that some string field is invalid.
//
// The unary Score request is also decoded into a buffer that is used again
// for a later request (see scoreRequest.release), not a fresh one each time.
type protoCodec struct {
	encoding.CodecV2
	// bufs holds *requestMemory: buffers a Score request's bytes were
	// copied into, with the messages it was decoded into, free to take for
	// the next one, so that a request's memory is not faulted in afresh
	// (bench/README.md, "Memory reused between requests"). The pool is
	// emptied by garbage collection: buffers a burst of large requests
	// left behind are gone after two GC cycles without them.
	bufs *sync.Pool
}

func newProtoCodec() protoCodec {
	return protoCodec{CodecV2: encoding.GetCodecV2("proto"), bufs: new(sync.Pool)}
}

// scoreRequest is what the Score and ScoreStream handlers receive: the
// decoded request, or why its bytes do not decode. grpc reports a codec
// error as INTERNAL, which says the server is at fault and which clients
// may retry on every replica; bytes that do not decode are the client's
// mistake, INVALID_ARGUMENT, so the codec hands the error to the handler
// instead.
//
// The strings of msg may be substrings of a buffer the codec lends: after
// release, nothing of msg, and nothing made from it without a copy, may be
// used (the buffer holds the next request).
//
// With a ticket, the codec reserves the memory the request takes before it
// takes it (its copy, its decoded messages), and gives back what of the
// receive reservation the message did not need; err is then a *MemoryError
// when that does not fit.
type scoreRequest struct {
	msg *rewardv1.ScoreRequest
	err error // a *RequestError when the message does not decode

	t       *ticket // the request's; nil when nothing is reserved
	receive int64   // what t holds for the message's bytes as they arrive
	wire    int     // the message's size, set by Unmarshal

	mem  *requestMemory // lent by the codec; nil when msg owns its strings
	bufs *sync.Pool
}

// release gives the request's memory back to the codec.
func (r *scoreRequest) release() {
	if r.mem != nil {
		r.bufs.Put(r.mem)
	}
	r.mem, r.msg = nil, nil
}

func (c protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*scoreRequest)
	if !ok {
		return c.unmarshal(data, v)
	}
	req.msg = new(rewardv1.ScoreRequest)
	req.wire = data.Len()
	size := int64(data.Len())
	if req.t != nil {
		if err := req.t.reserve(size + size/4); err != nil {
			req.err = err
			return nil
		}
		req.t.shrink(req.receive - size)
	}
	rm, _ := c.bufs.Get().(*requestMemory)
	if rm == nil {
		rm = new(requestMemory)
	}
	if cap(rm.buf) < data.Len() {
		// A quarter more than this request needs, so that the next
		// requests, which a trainer makes of the same size give or take
		// the lengths of their completions, fit in it too: a buffer too
		// small for the request at hand is dropped, and a new one is
		// faulted in page by page.
		rm.buf = make([]byte, data.Len(), data.Len()+data.Len()/4)
	}
	rm.buf = rm.buf[:data.Len()]
	data.CopyTo(rm.buf)
	if req.t != nil {
		// The strings proto.Unmarshal would copy are reserved too; the
		// decoder that shares the buffer gives them back.
		if err := req.t.reserve(decodeCost(len(rm.buf), protoShape(rm.buf))); err != nil {
			c.bufs.Put(rm)
			req.err = err
			return nil
		}
	}
	if decodeScoreRequest(rm.buf, req.msg, rm) {
		req.mem, req.bufs = rm, c.bufs
		if req.t != nil {
			req.t.shrink(size)
		}
		return nil
	}
	// proto.Unmarshal copies what it keeps: the memory is free again.
	c.bufs.Put(rm)
	proto.Reset(req.msg)
	if err := c.fallback(data, req.msg); err != nil {
		req.err = invalid("the request does not decode as a reward.v1.ScoreRequest: %v", err)
	}
	return nil
}

// encodedResponse is a response already in its wire form (see
// scoreHandler); Marshal sends it as it is.
type encodedResponse struct{ mem.Buffer }

func (c protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(encodedResponse); ok {
		return mem.BufferSlice{r.Buffer}, nil
	}
	return c.CodecV2.Marshal(v)
}

func (c protoCodec) unmarshal(data mem.BufferSlice, v any) error {
	if req, ok := v.(*rewardv1.ScoreRequest); ok {
		// Materialize copies the message into a buffer of its own, which
		// the decoded strings then share.
		if decodeScoreRequest(data.Materialize(), req, nil) {
			return nil
		}
		proto.Reset(req)
	}
	return c.fallback(data, v)
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
