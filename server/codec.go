package server

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/server/jsonl"
)

// protoCodec is grpc's proto codec (newGRPCServer forces it on the server
// with grpc.ForceServerCodecV2) with two differences, both for the
// messages the server spends its time on:
//
//   - A ScoreRequest is not decoded by the codec: Unmarshal keeps the
//     message's bytes in its receipts, and the handler decodes them
//     (grpcService.received, decodeRequest) into call memory from the
//     service's pool once the request's admission has reserved the memory
//     decoding takes, and answers bytes that do not decode with
//     INVALID_ARGUMENT (an error of the codec would reach the client as
//     grpc's INTERNAL, which says the server is at fault).
//   - A ScoreResponse is encoded by marshalResponse, which writes the
//     errors maps by hand, into a buffer of grpc's pool; then the call
//     memory the unary handler left with it in answers goes back to the
//     pool.
type protoCodec struct {
	encoding.CodecV2
	receipts *handover[*rewardv1.ScoreRequest, mem.BufferSlice]
	answers  *handover[*rewardv1.ScoreResponse, *callMemory]
}

func newProtoCodec() protoCodec {
	return protoCodec{CodecV2: encoding.GetCodecV2("proto"), receipts: newHandover[*rewardv1.ScoreRequest, mem.BufferSlice](),
		answers: newHandover[*rewardv1.ScoreResponse, *callMemory]()}
}

// handover holds what the codec and a handler pass each other with a
// message, by message, until the other takes it:
//
//   - receipts: the bytes of the ScoreRequests grpc asked the codec to
//     decode (grpc's buffers, referenced until the taker frees them).
//     Every such message is handed to a handler (grpc calls the unary
//     handler once the message is in; ScoreStream receives its own), and
//     each handler takes its message's bytes before anything else.
//   - answers: the call memory of a unary Score's response (its strings
//     and columns may be that memory), which Marshal releases once the
//     response is encoded: grpc marshals every response a handler returns
//     without an error.
//
// So each holds only the messages being handed over
// (TestReceiptsAreTaken).
type handover[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func newHandover[K comparable, V any]() *handover[K, V] {
	return &handover[K, V]{m: make(map[K]V)}
}

func (h *handover[K, V]) put(k K, v V) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[k] = v
}

// take returns what was put with k, and forgets it. ok is false when
// nothing was (for a receipt: a message made within the process).
func (h *handover[K, V]) take(k K) (v V, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok = h.m[k]
	delete(h.m, k)
	return v, ok
}

// pending is how many entries no one has taken.
func (h *handover[K, V]) pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

func (c protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if req, ok := v.(*rewardv1.ScoreRequest); ok {
		data.Ref()
		c.receipts.put(req, data)
		return nil
	}
	return c.CodecV2.Unmarshal(data, v)
}

// decodeRequest decodes b, the wire form of a ScoreRequest, into the empty
// req: with decodeScoreRequest, whose strings are substrings of b and
// whose messages are cm's (nil: allocated), or for what it does not handle
// with proto.Unmarshal. Bytes that do not decode are a *RequestError,
// which names the field when a string is not UTF-8. With a pacer p, it
// yields as p says, and returns p's error when a yield failed.
func decodeRequest(b []byte, req *rewardv1.ScoreRequest, cm *callMemory, p *pacer) error {
	if decodeScoreRequest(b, req, cm, p) {
		return nil
	}
	if err := p.failed(); err != nil {
		return err
	}
	proto.Reset(req)
	err := proto.Unmarshal(b, req)
	if err == nil {
		return nil
	}
	if where := invalidUTF8(b, req.ProtoReflect().Descriptor(), ""); where != "" {
		err = fmt.Errorf("%s (%w)", where, err)
	}
	return invalid("the request does not decode as a reward.v1.ScoreRequest: %v", err)
}

// paceBytes is how much of a message is copied, measured or decoded
// between two yields to the pool: a few hundred microseconds of work.
const paceBytes = 1 << 20

// pacer cuts the work on one message (grpcService.received) as the pool
// cuts scoring into spans: after each paceBytes it yields (scorers.Yield
// on its ctx), so that a request that has used the workers less may take
// the slot. A nil pacer never yields.
type pacer struct {
	ctx   context.Context
	since int
	err   error
}

// step counts n bytes of work done, yielding once they add up to
// paceBytes; it reports false once a yield has failed (ctx ended), and
// the work should stop.
func (p *pacer) step(n int) bool {
	if p == nil {
		return true
	}
	if p.err != nil {
		return false
	}
	if p.since += n; p.since >= paceBytes {
		p.since = 0
		p.err = scorers.Yield(p.ctx)
	}
	return p.err == nil
}

// failed is the error of the yield that failed, if any.
func (p *pacer) failed() error {
	if p == nil {
		return nil
	}
	return p.err
}

func (c protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	resp, ok := v.(*rewardv1.ScoreResponse)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	if cm, ok := c.answers.take(resp); ok {
		defer cm.release()
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
