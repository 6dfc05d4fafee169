package server

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server/config"
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
// may take (limits.max_message_bytes), waiting while the budget, or the
// quarter of it streams' receipts may hold, is full: it then stops
// reading, and HTTP/2 flow control holds the client back. Each
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
	s := &scoreStream{g: g, stream: stream, tc: tc, ctx: ctx, cancel: cancel, lim: g.svc.limits(),
		window: make(chan struct{}, streamWindow), groups: newGroupSet(maxStreamGroups)}
	s.expect.Store(int64(s.lim.MaxMessageBytes))
	var recvErr error
	for {
		b, err := s.next()
		if err != nil {
			recvErr = err
			break
		}
		if b == nil || !s.start(b) {
			break
		}
	}
	s.wg.Wait()
	switch {
	case recvErr != nil:
		return recvErr
	case s.sendErr != nil:
		g.log.Debug("stream send failed", zap.Error(s.sendErr))
		return toStatus(g.log, "ScoreStream", s.sendErr).Err()
	}
	return stream.Context().Err()
}

// scoreStream is one ScoreStream call: its batches in flight (wg, at most
// streamWindow of them) and the sending of their answers, one at a time.
type scoreStream struct {
	g      *grpcService
	stream rewardv1.RewardService_ScoreStreamServer
	tc     *timedContext // the stream's timeouts
	ctx    context.Context
	cancel context.CancelFunc // ends the stream's work
	lim    config.Limits
	window chan struct{}
	groups *groupSet
	wg     conc.WaitGroup
	// expect is the size of the stream's last message (see
	// ticket.takeReceipt).
	expect atomic.Int64

	sendMu  sync.Mutex
	sendErr error // the first send that failed; nothing is sent after it
}

// batch is one batch of a stream: its request, the ticket holding its
// memory budget, and the call memory it is decoded into, both released
// once its answer is sent.
type batch struct {
	t   *ticket
	req *rewardv1.ScoreRequest
	cm  *callMemory
	// account is the batch's worker time, from its decoding on.
	account *share
}

func (b *batch) release() {
	b.cm.release()
	b.t.release()
}

// next reads the stream's next batch, with a ticket of its own holding its
// memory. It answers a batch refused alone (it does not fit in the memory
// budget, or it sends a group an earlier batch sent) and reads on. It
// returns a nil batch when the stream ends without an error of its own
// (the client is done sending, or the stream was cancelled), and the error
// that ends the stream otherwise.
func (s *scoreStream) next() (*batch, error) {
	for {
		t := s.g.svc.ticket()
		t.expect = &s.expect
		if err := t.takeReceipt(s.ctx, int64(s.lim.MaxMessageBytes), true); err != nil {
			t.release()
			if s.ctx.Err() != nil {
				return nil, nil
			}
			return nil, toStatus(s.g.log, "ScoreStream", err).Err()
		}
		req := new(rewardv1.ScoreRequest)
		if err := s.recv(req); err != nil {
			t.release()
			if errors.Is(err, io.EOF) {
				return nil, nil // the client is done sending: finish what is in flight
			}
			s.cancel()
			return nil, err
		}
		cm, account, err := s.g.received(s.ctx, t, req)
		var me *MemoryError
		switch {
		case errors.As(err, &me):
			// The message was read and dropped: the stream goes on.
			t.release()
			s.answerError(req.GetBatchId(), err)
			continue
		case err != nil:
			// Which batch it was cannot be known: the stream ends.
			t.release()
			s.cancel()
			return nil, toStatus(s.g.log, "ScoreStream", err).Err()
		}
		b := &batch{t: t, req: req, cm: cm, account: account}
		if dup, first := s.groups.addAll(req); dup != "" {
			s.answerError(req.GetBatchId(), invalid("batch %q: group %q was already sent in batch %q on this stream: send each group whole, in one message", req.GetBatchId(), dup, first))
			b.release()
			continue
		}
		return b, nil
	}
}

// recv receives the next message into req, within
// limits.stream_idle_timeout. A stream cut for idling has had its status
// sent by grpc already (DEADLINE_EXCEEDED, "context deadline exceeded"):
// the reason is in the log and the stage in the metrics.
func (s *scoreStream) recv(req *rewardv1.ScoreRequest) error {
	stop := s.tc.expireAfter(s.lim.StreamIdleTimeout, func() { s.g.m.timeouts.WithLabelValues("stream_idle").Inc() })
	err := s.stream.RecvMsg(req)
	if idle := !stop(); idle && err != nil {
		s.g.log.Debug("stream idle: ended", zap.Duration("stream_idle_timeout", s.lim.StreamIdleTimeout))
	}
	return err
}

// start scores b once the window has room, and sends its answer; b is
// released when it is sent. It returns false, with b released, when the
// stream ended first.
func (s *scoreStream) start(b *batch) bool {
	select {
	case s.window <- struct{}{}:
	case <-s.ctx.Done():
	}
	if s.ctx.Err() != nil {
		b.release()
		return false
	}
	s.wg.Go(func() {
		defer func() { <-s.window }()
		defer b.release()
		req := b.req
		start := time.Now()
		resp, err := s.g.svc.score(withTicket(s.ctx, b.t), req, b.cm, b.account)
		st := toStatus(s.g.log, "ScoreStream", err)
		s.g.m.requests.WithLabelValues("ScoreStream", st.Code().String()).Inc()
		s.g.m.requestDuration.WithLabelValues("ScoreStream").Observe(time.Since(start).Seconds())
		if st.Code() != codes.OK {
			if s.ctx.Err() != nil {
				return // the stream is gone; nobody reads the answer
			}
			resp = &rewardv1.ScoreResponse{BatchId: req.GetBatchId(), ErrorCode: int32(st.Code()), ErrorMessage: st.Message()}
		}
		s.send(resp)
	})
	return true
}

// answerError answers a batch refused before scoring with err's status.
func (s *scoreStream) answerError(batchID string, err error) {
	st := toStatus(s.g.log, "ScoreStream", err)
	s.g.m.requests.WithLabelValues("ScoreStream", st.Code().String()).Inc()
	s.send(&rewardv1.ScoreResponse{BatchId: batchID, ErrorCode: int32(st.Code()), ErrorMessage: st.Message()})
}

// send sends resp, unless a send failed before, within
// limits.write_timeout. A send that fails ends the stream's work.
func (s *scoreStream) send(resp *rewardv1.ScoreResponse) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.sendErr != nil {
		return
	}
	stop := s.tc.expireAfter(s.lim.WriteTimeout, func() { s.g.m.timeouts.WithLabelValues("write").Inc() })
	s.sendErr = s.stream.Send(resp)
	if !stop() {
		s.sendErr = &timeoutError{fmt.Sprintf("the client did not take an answer within %v (limits.write_timeout)", s.lim.WriteTimeout)}
	}
	if s.sendErr != nil {
		s.cancel()
	}
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
