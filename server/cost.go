package server

import (
	"google.golang.org/protobuf/encoding/protowire"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// What the admission reserves for a request, in bytes: upper bounds of what
// the server allocates for it (TestCostsBoundAllocations measures them).
const (
	// nodeCost is one decoded Struct, Value, ListValue, map entry or list
	// element (from protobuf or JSON), with its share of the map or slice
	// it lives in.
	nodeCost = 192
	// rolloutCost is one decoded Rollout, the scorers' view of it, and its
	// place in the aggregation.
	rolloutCost = 320
	// resultCost is one function's result for one rollout: the result and
	// its reason, and the value, status and reason in the response, encoded.
	resultCost = 160
)

// decodeCost bounds what decoding a request of size bytes with the given
// shape allocates besides its bytes: the strings, when the decoder copies
// them, and the messages.
func decodeCost(size int, sh shape) int64 {
	return int64(size) + int64(sh.nodes)*nodeCost + int64(sh.rollouts)*rolloutCost
}

// scoringCost bounds what scoring n rollouts with tasks functions holds
// beyond the decoded request.
func scoringCost(n, tasks int) int64 { return int64(n) * int64(tasks) * resultCost }

// shape is what the admission needs to know of a request before decoding
// it: how many rollouts it has, and how many messages, values and map or
// list entries decoding it makes at most (a protobuf or JSON document's
// tree can be many times larger in memory than on the wire: an empty list
// takes two bytes on the wire and a hundred in memory).
type shape struct{ rollouts, nodes int }

// protoShape counts the rollouts and nodes of a ScoreRequest's wire form
// without decoding it. Where b is malformed it counts what comes before:
// a decoder stops there too. The prompt-once form's prompts and columns
// count as decoded; what expanding them makes is expansionCost's.
func protoShape(b []byte, p *pacer) shape {
	var sh shape
	eachField(b, func(num protowire.Number, v []byte) {
		p.step(len(v)) // after a failed yield, received stops at the next step
		switch num {
		case 2: // rollouts
			sh.rollouts++
			eachField(v, func(num protowire.Number, v []byte) {
				if num == 5 { // fields
					sh.nodes += structNodes(v)
				}
			})
		case 4: // inline
			sh.nodes++
			eachField(v, func(num protowire.Number, v []byte) {
				if num == 3 { // params
					sh.nodes += structNodes(v)
				}
			})
		case 5: // aggregation: its weights are map entries
			sh.nodes++
			eachField(v, func(protowire.Number, []byte) { sh.nodes++ })
		case 6: // prompts
			sh.nodes++
		case 7, 8: // prompt_fields, rollout_fields
			sh.nodes++
			eachField(v, func(num protowire.Number, v []byte) {
				if num == 2 { // values
					sh.nodes += valueNodes(v)
				}
			})
		}
	})
	return sh
}

// expansionCost bounds what expand allocates for the decoded req: a fields
// Struct with an entry per prompt column for each prompt, and a Struct per
// rollout that merges rollout columns or fields of its own with its
// prompt's. It is 0 for a request that does not use the prompt-once form.
func expansionCost(req *rewardv1.ScoreRequest) int64 {
	kp, kr := len(req.GetPromptFields()), len(req.GetRolloutFields())
	if kp == 0 && kr == 0 {
		return 0
	}
	nodes := 0
	if kp > 0 {
		nodes += len(req.GetPrompts()) * (1 + kp)
	}
	for _, r := range req.GetRollouts() {
		if own := len(r.GetFields().GetFields()); kr > 0 || own > 0 {
			nodes += 1 + kp + kr + own
		}
	}
	return int64(nodes) * nodeCost
}

// structNodes counts a google.protobuf.Struct's nodes: itself, its entries
// and their values.
func structNodes(b []byte) int {
	n := 1
	eachField(b, func(num protowire.Number, entry []byte) {
		n++
		eachField(entry, func(num protowire.Number, v []byte) {
			if num == 2 {
				n += valueNodes(v)
			}
		})
	})
	return n
}

// valueNodes counts a google.protobuf.Value's nodes.
func valueNodes(b []byte) int {
	n := 1
	eachField(b, func(num protowire.Number, v []byte) {
		switch num {
		case 5: // struct_value
			n += structNodes(v)
		case 6: // list_value
			n++
			eachField(v, func(num protowire.Number, v []byte) {
				if num == 1 {
					n += valueNodes(v)
				}
			})
		}
	})
	return n
}

// eachField calls f with the number and value of each length-delimited field
// of the message b, skipping fields of other wire types, and stops at the
// first malformed one.
func eachField(b []byte, f func(num protowire.Number, v []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return
		}
		b = b[n:]
		f(num, v)
	}
}

// jsonShape bounds the values of the JSON document b: every value but the
// first follows a '{', a '[' or a ',' outside strings. Every object may be
// a rollout.
func jsonShape(b []byte) shape {
	n, objects := 1, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			n++
			objects++
		case c == '[' || c == ',':
			n++
		}
	}
	return shape{rollouts: objects, nodes: n}
}
