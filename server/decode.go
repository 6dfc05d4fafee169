package server

import (
	"math"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// decodeScoreRequest decodes b, the wire form of a ScoreRequest, into the
// empty message m as proto.Unmarshal would, for the shapes trainers send.
// The Rollout messages are cm's (callMemory.decoded), allocated when cm is
// nil.
// It is the server's hot path: proto.Unmarshal spends most of a Score call
// allocating a string per field and a map entry per row column (about 14
// allocations per rollout, 40% of the CPU of a loopback load); this makes
// every string of the request a substring of b (so b must not change while
// m is in use), and takes the messages from a few slabs, so a rollout costs
// about two allocations (its fields map).
//
// It returns false, with m in an unspecified state, on anything else: an
// unknown field, a wire type that does not match, invalid UTF-8, a
// truncated value, a map entry without its value. The caller then decodes
// with proto.Unmarshal, which keeps unknown fields and names the problem.
// Nested values other than strings and numbers (lists, structs, bools,
// nulls), inline functions and the aggregation are decoded by
// proto.Unmarshal in place. The prompt-once form (prompts, prompt_fields,
// rollout_fields, Rollout.prompt_index) is decoded here too; Service
// expands it.
//
// Whatever keeps a request's string beyond the request must strings.Clone
// it: b is a call's memory, which the next call writes over once this one
// is answered (callMemory), and any other b would stay alive whole.
func decodeScoreRequest(b []byte, m *rewardv1.ScoreRequest, cm *callMemory, p *pacer) bool {
	if len(b) == 0 {
		return true
	}
	d := wireDecoder{b: b, s: unsafe.String(&b[0], len(b))}
	n, ok := d.rolloutCount()
	if !ok {
		return false
	}
	if n > 0 {
		d.rollouts, m.Rollouts = cm.decoded(n)
	}
	for i := 0; i < len(b); {
		num, typ, vs, ve, next := d.field(i, len(b))
		if !p.step(next - i) {
			return false
		}
		i = next
		switch {
		case num == 1 && typ == protowire.BytesType:
			s, ok := d.str(vs, ve)
			if !ok {
				return false
			}
			m.BatchId = s
		case num == 2 && typ == protowire.BytesType:
			r := &d.rollouts[len(m.Rollouts)]
			if !d.rollout(vs, ve, r) {
				return false
			}
			m.Rollouts = append(m.Rollouts, r)
		case num == 3 && typ == protowire.BytesType:
			s, ok := d.str(vs, ve)
			if !ok {
				return false
			}
			m.Functions = append(m.Functions, s)
		case num == 4 && typ == protowire.BytesType:
			spec := new(rewardv1.FunctionSpec)
			if proto.Unmarshal(b[vs:ve], spec) != nil {
				return false
			}
			m.Inline = append(m.Inline, spec)
		case num == 5 && typ == protowire.BytesType:
			if m.Aggregation == nil {
				m.Aggregation = new(rewardv1.Aggregation)
			}
			if (proto.UnmarshalOptions{Merge: true}).Unmarshal(b[vs:ve], m.Aggregation) != nil {
				return false
			}
		case num == 6 && typ == protowire.BytesType:
			s, ok := d.str(vs, ve)
			if !ok {
				return false
			}
			m.Prompts = append(m.Prompts, s)
		case (num == 7 || num == 8) && typ == protowire.BytesType:
			c := new(rewardv1.FieldColumn)
			if !d.column(vs, ve, c) {
				return false
			}
			if num == 7 {
				m.PromptFields = append(m.PromptFields, c)
			} else {
				m.RolloutFields = append(m.RolloutFields, c)
			}
		case num == 9 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b[vs:ve])
			if n < 0 {
				return false
			}
			m.OmitOkReasons = protowire.DecodeBool(v)
		case num == 10 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b[vs:ve])
			if n < 0 {
				return false
			}
			m.ReasonsAsLists = protowire.DecodeBool(v)
		default:
			return false
		}
	}
	return true
}

// rolloutCount counts the rollouts of the ScoreRequest in d.b, or returns
// false when its fields do not parse.
func (d *wireDecoder) rolloutCount() (int, bool) {
	n := 0
	for i := 0; i < len(d.b); {
		num, typ, _, _, next := d.field(i, len(d.b))
		if next < 0 {
			return 0, false
		}
		if num == 2 && typ == protowire.BytesType {
			n++
		}
		i = next
	}
	return n, true
}

// wireDecoder reads the wire form in b; s is the same bytes as a string,
// which the decoded strings are cut from.
type wireDecoder struct {
	b []byte
	s string
	// Slabs the messages are taken from.
	rollouts []rewardv1.Rollout
	structs  []structpb.Struct
	values   []structpb.Value
	strs     []structpb.Value_StringValue
	// last is the previous rollout's fields, decoded from d.s[lastFrom:
	// lastTo]. The rollouts of a GRPO group carry the same row (the
	// reference answer, the tests), byte for byte: a rollout whose fields
	// are the same bytes shares last instead of decoding them again and
	// building a map of its own, which was a fifth of the decoder's time.
	// Nothing writes to a request's fields after decoding (scorers
	// already read them concurrently, one goroutine per function).
	last             *structpb.Struct
	lastFrom, lastTo int
}

// field reads the field starting at b[i:] (within b[:end]): its number and
// type, the bounds of a length-delimited value (vs, ve), and where the next
// field starts; next is negative when the field is malformed.
func (d *wireDecoder) field(i, end int) (num protowire.Number, typ protowire.Type, vs, ve, next int) {
	num, typ, n := protowire.ConsumeTag(d.b[i:end])
	if n < 0 {
		return 0, 0, 0, 0, -1
	}
	i += n
	if typ == protowire.BytesType {
		l, n := protowire.ConsumeVarint(d.b[i:end])
		if n < 0 || l > uint64(end-i-n) {
			return 0, 0, 0, 0, -1
		}
		vs = i + n
		ve = vs + int(l)
		return num, typ, vs, ve, ve
	}
	n = protowire.ConsumeFieldValue(num, typ, d.b[i:end])
	if n < 0 {
		return 0, 0, 0, 0, -1
	}
	return num, typ, i, i + n, i + n
}

// str is the string in b[vs:ve] when it is valid UTF-8, as proto3 requires.
func (d *wireDecoder) str(vs, ve int) (string, bool) {
	s := d.s[vs:ve]
	return s, utf8.ValidString(s)
}

// rollout decodes a Rollout from b[vs:ve] into r.
func (d *wireDecoder) rollout(vs, ve int, r *rewardv1.Rollout) bool {
	for i := vs; i < ve; {
		num, typ, fs, fe, next := d.field(i, ve)
		if next < 0 {
			return false
		}
		i = next
		if num == 6 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(d.b[fs:fe])
			r.PromptIndex = uint32(v)
			continue
		}
		if typ != protowire.BytesType {
			return false
		}
		var dst *string
		switch num {
		case 1:
			dst = &r.Id
		case 2:
			dst = &r.Group
		case 3:
			dst = &r.Prompt
		case 4:
			dst = &r.Completion
		case 5:
			if r.Fields != nil {
				// A second occurrence merges into the first, which may
				// be shared: proto.Unmarshal decodes this shape.
				return false
			}
			if d.last != nil && d.s[fs:fe] == d.s[d.lastFrom:d.lastTo] {
				r.Fields = d.last
				continue
			}
			r.Fields = take(&d.structs)
			if !d.fields(fs, fe, r.Fields) {
				return false
			}
			d.last, d.lastFrom, d.lastTo = r.Fields, fs, fe
			continue
		default:
			return false
		}
		s, ok := d.str(fs, fe)
		if !ok {
			return false
		}
		*dst = s
	}
	return true
}

// column decodes a FieldColumn from b[vs:ve] into c.
func (d *wireDecoder) column(vs, ve int, c *rewardv1.FieldColumn) bool {
	for i := vs; i < ve; {
		num, typ, fs, fe, next := d.field(i, ve)
		if next < 0 || typ != protowire.BytesType {
			return false
		}
		i = next
		switch num {
		case 1:
			s, ok := d.str(fs, fe)
			if !ok {
				return false
			}
			c.Name = s
		case 2:
			v := d.value(fs, fe)
			if v == nil {
				return false
			}
			c.Values = append(c.Values, v)
		default:
			return false
		}
	}
	return true
}

// fields decodes a Struct (the rollout's row fields) from b[vs:ve] into st.
func (d *wireDecoder) fields(vs, ve int, st *structpb.Struct) bool {
	for i := vs; i < ve; {
		num, typ, es, ee, next := d.field(i, ve)
		if next < 0 || num != 1 || typ != protowire.BytesType {
			return false
		}
		i = next
		// A map entry: key = 1 (string), value = 2 (Value), each once.
		key, val := "", (*structpb.Value)(nil)
		for j := es; j < ee; {
			num, typ, fs, fe, next := d.field(j, ee)
			if next < 0 || typ != protowire.BytesType {
				return false
			}
			j = next
			switch {
			case num == 1:
				s, ok := d.str(fs, fe)
				if !ok {
					return false
				}
				key = s
			case num == 2 && val == nil:
				if val = d.value(fs, fe); val == nil {
					return false
				}
			default:
				return false
			}
		}
		if val == nil {
			return false
		}
		if st.Fields == nil {
			st.Fields = make(map[string]*structpb.Value, 1)
		}
		st.Fields[key] = val
	}
	return true
}

// value decodes a Value from b[vs:ve], or returns nil. Strings and numbers,
// which are what row fields hold, are decoded here; other kinds by
// proto.Unmarshal.
func (d *wireDecoder) value(vs, ve int) *structpb.Value {
	v := take(&d.values)
	num, typ, fs, fe, next := d.field(vs, ve)
	switch {
	case next == ve && num == 3 && typ == protowire.BytesType:
		s, ok := d.str(fs, fe)
		if !ok {
			return nil
		}
		sv := take(&d.strs)
		sv.StringValue = s
		v.Kind = sv
	case next == ve && num == 2 && typ == protowire.Fixed64Type:
		bits, _ := protowire.ConsumeFixed64(d.b[fs:fe])
		v.Kind = &structpb.Value_NumberValue{NumberValue: math.Float64frombits(bits)}
	default:
		if proto.Unmarshal(d.b[vs:ve], v) != nil {
			return nil
		}
	}
	return v
}

// slab is how many Structs, Values and string kinds are allocated at once.
const slab = 256

// take returns the next element of *s, which a new slab refills when it is
// used up.
func take[T any](s *[]T) *T {
	if len(*s) == 0 {
		*s = make([]T, slab)
	}
	v := &(*s)[0]
	*s = (*s)[1:]
	return v
}
