package server

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// streamWindow is how many batches of one stream are scored at a time. While
// that many are in flight the stream stops reading, so HTTP/2 flow control
// pushes back on the sender: a slow reader never makes the server buffer
// without bound.
const streamWindow = 4

// maxStreamGroups bounds the group ids a stream remembers to catch a group
// split over two messages (its advantages would be wrong).
const maxStreamGroups = 1 << 17

// ScoreStream scores each batch as it arrives and answers it as soon as it is
// scored, tagged with its batch_id, in whatever order batches finish. A batch
// that fails is answered with error_code and error_message and the stream
// goes on; cancelling the stream stops all of its work.
//
// Before it reads each message the stream reserves the memory the message
// may take (limits.max_message_bytes), waiting while the budget is full: it
// then stops reading, and HTTP/2 flow control holds the client back. Each
// batch holds its memory until its answer is sent. The stream ends when it
// sends nothing for limits.stream_idle_timeout, or when the client does not
// take an answer within limits.write_timeout.
func (g *grpcService) ScoreStream(stream rewardv1.RewardService_ScoreStreamServer) error {
	tc := timedFrom(stream.Context())
	if tc == nil {
		// Called without the tap (which every server made by
		// server.New wires): no timeouts.
		tc = newTimedContext(stream.Context())
		defer tc.cancel()
	}
	ctx, cancel := context.WithCancel(tc)
	defer cancel()
	lim := g.svc.limits()

	var (
		sendMu  sync.Mutex
		sendErr error
		wg      conc.WaitGroup
		window  = make(chan struct{}, streamWindow)
		groups  = newGroupSet(maxStreamGroups)
	)
	send := func(resp *rewardv1.ScoreResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if sendErr != nil {
			return
		}
		stop := tc.expireAfter(lim.WriteTimeout, func() { g.m.timeouts.WithLabelValues("write").Inc() })
		sendErr = stream.Send(resp)
		if !stop() {
			sendErr = &timeoutError{fmt.Sprintf("the client did not take an answer within %v (limits.write_timeout)", lim.WriteTimeout)}
		}
		if sendErr != nil {
			cancel()
		}
	}

	var recvErr error
	for {
		t := g.svc.ticket()
		if err := t.reserveWait(ctx, int64(lim.MaxMessageBytes)); err != nil {
			t.release()
			if ctx.Err() == nil {
				recvErr = toStatus(g.log, "ScoreStream", err).Err()
			}
			break
		}
		in := &scoreRequest{t: t, receive: int64(lim.MaxMessageBytes)}
		stop := tc.expireAfter(lim.StreamIdleTimeout, func() { g.m.timeouts.WithLabelValues("stream_idle").Inc() })
		err := stream.RecvMsg(in)
		idle := !stop()
		t.shrink(int64(in.wire))
		if err != nil {
			t.release()
			if errors.Is(err, io.EOF) {
				break // the client is done sending: finish what is in flight
			}
			// A stream cut for idling has had its status sent by grpc
			// already (DEADLINE_EXCEEDED, "context deadline exceeded"): the
			// reason is in the log and the stage in the metrics.
			recvErr = err
			if idle {
				g.log.Debug("stream idle: ended", zap.Duration("stream_idle_timeout", lim.StreamIdleTimeout))
			}
			cancel()
			break
		}
		if in.err != nil {
			t.release()
			var me *MemoryError
			if errors.As(in.err, &me) {
				// Which batch it was cannot be known, but the stream
				// can go on: the message was read and dropped.
				st := toStatus(g.log, "ScoreStream", in.err)
				g.m.requests.WithLabelValues("ScoreStream", st.Code().String()).Inc()
				send(&rewardv1.ScoreResponse{ErrorCode: int32(st.Code()), ErrorMessage: st.Message()})
				continue
			}
			// Which batch it was cannot be known: the stream ends.
			recvErr = toStatus(g.log, "ScoreStream", in.err).Err()
			cancel()
			break
		}
		req := in.msg
		if dup, batch := groups.addAll(req); dup != "" {
			t.release()
			st := toStatus(g.log, "ScoreStream", invalid("batch %q: group %q was already sent in batch %q on this stream: send each group whole, in one message", req.GetBatchId(), dup, batch))
			g.m.requests.WithLabelValues("ScoreStream", st.Code().String()).Inc()
			send(&rewardv1.ScoreResponse{BatchId: req.GetBatchId(), ErrorCode: int32(st.Code()), ErrorMessage: st.Message()})
			continue
		}
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			t.release()
			break
		}
		wg.Go(func() {
			defer func() { <-window }()
			defer t.release()
			start := time.Now()
			resp, err := g.svc.Score(withTicket(ctx, t), req)
			st := toStatus(g.log, "ScoreStream", err)
			g.m.requests.WithLabelValues("ScoreStream", st.Code().String()).Inc()
			g.m.requestDuration.WithLabelValues("ScoreStream").Observe(time.Since(start).Seconds())
			if st.Code() != codes.OK {
				if ctx.Err() != nil {
					return // the stream is gone; nobody reads the answer
				}
				resp = &rewardv1.ScoreResponse{BatchId: req.GetBatchId(), ErrorCode: int32(st.Code()), ErrorMessage: st.Message()}
			}
			send(resp)
		})
	}
	wg.Wait()
	switch {
	case recvErr != nil:
		return recvErr
	case sendErr != nil:
		g.log.Debug("stream send failed", zap.Error(sendErr))
		return toStatus(g.log, "ScoreStream", sendErr).Err()
	}
	return stream.Context().Err()
}

// groupSet remembers the group ids seen on a stream, forgetting the oldest
// beyond its capacity. It keeps hashes of the ids, never the ids: a
// request's strings are cut from its buffer (see decodeScoreRequest), and a
// set holding them would hold every recent request's whole buffer. Two ids
// of one stream with the same 64-bit hash (about one chance in 10^9 among
// 131,072 ids) would be taken for the same group.
type groupSet struct {
	seed     maphash.Seed
	batch    map[uint64]int // hash of a group id → index of the batch it came in
	order    []uint64       // oldest first
	capacity int
	// batches are the ids of the batches that sent the groups in batch,
	// copied; kept as long as one of their groups is.
	batches map[int]string
	refs    map[int]int
	next    int
}

func newGroupSet(capacity int) *groupSet {
	return &groupSet{seed: maphash.MakeSeed(), batch: make(map[uint64]int), capacity: capacity,
		batches: make(map[int]string), refs: make(map[int]int)}
}

// addAll records the explicit group ids of req and returns the first one an
// earlier batch already sent, with that batch's id. Rollouts without a group
// id are grouped by prompt and not checked: the same prompt may legitimately
// come back in a later step.
func (s *groupSet) addAll(req *rewardv1.ScoreRequest) (dup, batch string) {
	for _, r := range req.GetRollouts() {
		if g := r.GetGroup(); g != "" {
			if b, ok := s.batch[maphash.String(s.seed, g)]; ok && s.batches[b] != req.GetBatchId() {
				return strings.Clone(g), s.batches[b]
			}
		}
	}
	this := s.next
	s.next++
	for _, r := range req.GetRollouts() {
		g := r.GetGroup()
		if g == "" {
			continue
		}
		h := maphash.String(s.seed, g)
		if _, ok := s.batch[h]; ok {
			continue // this batch's own, seen in an earlier rollout
		}
		if len(s.order) == s.capacity {
			s.forget(s.order[0])
			s.order = s.order[1:]
		}
		s.batch[h] = this
		s.order = append(s.order, h)
		s.refs[this]++
	}
	if s.refs[this] > 0 {
		s.batches[this] = strings.Clone(req.GetBatchId())
	}
	return "", ""
}

func (s *groupSet) forget(h uint64) {
	b := s.batch[h]
	delete(s.batch, h)
	if s.refs[b]--; s.refs[b] == 0 {
		delete(s.refs, b)
		delete(s.batches, b)
	}
}
