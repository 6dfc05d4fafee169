package server

import (
	"context"
	"errors"
	"io"
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
func (g *grpcService) ScoreStream(stream rewardv1.RewardService_ScoreStreamServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()

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
		if sendErr = stream.Send(resp); sendErr != nil {
			cancel()
		}
	}

	var recvErr error
	for {
		in := new(scoreRequest)
		if err := stream.RecvMsg(in); err != nil {
			if !errors.Is(err, io.EOF) {
				recvErr = err
				cancel()
			}
			break
		}
		if in.err != nil {
			// Which batch it was cannot be known: the stream ends.
			recvErr = toStatus(g.log, "ScoreStream", in.err).Err()
			cancel()
			break
		}
		req := in.msg
		if dup, batch := groups.addAll(req); dup != "" {
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
			break
		}
		wg.Go(func() {
			defer func() { <-window }()
			start := time.Now()
			resp, err := g.svc.Score(ctx, req)
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
		return sendErr
	}
	return stream.Context().Err()
}

// groupSet remembers the group ids seen on a stream, forgetting the oldest
// beyond its capacity.
type groupSet struct {
	batch    map[string]string // group → batch it came in
	order    []string          // oldest first
	capacity int
}

func newGroupSet(capacity int) *groupSet {
	return &groupSet{batch: make(map[string]string), capacity: capacity}
}

// addAll records the explicit group ids of req and returns the first one an
// earlier batch already sent, with that batch's id. Rollouts without a group
// id are grouped by prompt and not checked: the same prompt may legitimately
// come back in a later step.
func (s *groupSet) addAll(req *rewardv1.ScoreRequest) (dup, batch string) {
	for _, r := range req.GetRollouts() {
		if g := r.GetGroup(); g != "" {
			if b, ok := s.batch[g]; ok && b != req.GetBatchId() {
				return g, b
			}
		}
	}
	for _, r := range req.GetRollouts() {
		g := r.GetGroup()
		if g == "" {
			continue
		}
		if _, ok := s.batch[g]; ok {
			continue
		}
		if len(s.order) == s.capacity {
			delete(s.batch, s.order[0])
			s.order = s.order[1:]
		}
		s.batch[g] = req.GetBatchId()
		s.order = append(s.order, g)
	}
	return "", ""
}
