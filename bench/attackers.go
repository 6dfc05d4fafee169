package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/h2raw"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// attacker runs one attack.
type attacker interface {
	// run attacks until ctx ends, closing ready once the attack is in
	// place, and returns what it did and got.
	run(ctx context.Context, ready chan<- struct{}) *AttackerResult
	// close releases what the attacker set up before its run.
	close()
}

// Outcomes every attack may end with: the phase ended first.
const (
	openAtEnd = "open when the phase ended"
)

// newAttacker prepares opts.Attack: its requests encoded, its gRPC
// connections made, before the first phase.
func newAttacker(ctx context.Context, opts *OverloadOptions) (attacker, error) {
	switch opts.Attack {
	case AttackUnauth:
		return &unauthAttack{addr: opts.Addr, conns: opts.Attackers}, nil
	case AttackMemory, AttackLarge, AttackSimilarity:
		return newUnaryAttack(ctx, opts)
	case AttackStreams:
		return newStreamAttack(ctx, opts)
	case AttackSlow:
		return &slowAttack{addr: opts.HTTPAddr, clients: opts.Attackers, token: opts.AuthToken}, nil
	case AttackIdle:
		return &idleAttack{grpcAddr: opts.Addr, httpAddr: opts.HTTPAddr, conns: opts.Attackers}, nil
	}
	return nil, &OptionError{fmt.Errorf("unknown attack %q", opts.Attack)}
}

// outcomes counts how an attack's calls ended, from any goroutine.
type outcomes struct {
	mu    sync.Mutex
	sent  int
	by    map[string]int
	times []time.Duration
}

func newOutcomes() *outcomes { return &outcomes{by: map[string]int{}} }

// add records one call that ended as how, after took (0: not timed).
func (o *outcomes) add(how string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent++
	o.by[how]++
	if took > 0 && how != openAtEnd {
		o.times = append(o.times, took)
	}
}

func (o *outcomes) result(what string, allowed ...string) *AttackerResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := &AttackerResult{What: what, Sent: o.sent, Outcomes: o.by, Allowed: allowed}
	if len(o.times) > 0 {
		l := latencyOf(o.times)
		r.Latency = &l
	}
	return r
}

// readyAfter returns a function that closes ready on its n-th call.
func readyAfter(n int, ready chan<- struct{}) func() {
	var calls atomic.Int64
	return func() {
		if calls.Add(1) == int64(n) {
			close(ready)
		}
	}
}

// unauthAttack opens Score and ScoreStream calls without the token on
// conns connections, HEADERS only, keeping perConn open on each: a call
// answered is replaced at once.
type unauthAttack struct {
	addr  string
	conns int
}

const unauthPerConn = 64

func (a *unauthAttack) close() {}

func (a *unauthAttack) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	out := newOutcomes()
	onReady := readyAfter(a.conns, ready)
	var reconnects atomic.Int64
	var wg conc.WaitGroup
	for range a.conns {
		wg.Go(func() {
			first := true
			for ctx.Err() == nil {
				c, err := h2raw.Dial(ctx, a.addr)
				if err != nil {
					if ctx.Err() == nil {
						out.add("dial error", 0)
						sleep(ctx, 100*time.Millisecond)
					}
					continue
				}
				if !first {
					reconnects.Add(1)
				}
				a.attackConn(ctx, c, out, first, onReady)
				first = false
			}
		})
	}
	wg.Wait()
	r := out.result(fmt.Sprintf("%d connections, each keeping %d Score and ScoreStream calls open without the token (HEADERS only)", a.conns, unauthPerConn),
		codes.Unauthenticated.String(), openAtEnd)
	if n := reconnects.Load(); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("the server closed the attacker's connections %d times", n))
	}
	return r
}

// attackConn keeps unauthPerConn calls open on c until ctx ends or the
// server closes c.
func (a *unauthAttack) attackConn(ctx context.Context, c *h2raw.Conn, out *outcomes, first bool, onReady func()) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, unauthPerConn)
	var mu sync.Mutex
	opened := map[uint32]time.Time{}
	var wg conc.WaitGroup
	wg.Go(func() {
		c.Serve(h2raw.Handler{Ended: func(id uint32, how string) {
			mu.Lock()
			t0, ok := opened[id]
			delete(opened, id)
			mu.Unlock()
			if ok {
				out.add(how, time.Since(t0))
				<-slots
			}
		}})
		cancel()
	})
	stop := context.AfterFunc(cctx, func() { c.Close() })
	defer stop()
	paths := []string{scoreMethod, scoreStreamMethod}
	for i := 0; ; i++ {
		select {
		case slots <- struct{}{}:
		case <-cctx.Done():
		}
		if cctx.Err() != nil {
			break
		}
		mu.Lock()
		id, err := c.Open(paths[i%2])
		if err == nil {
			opened[id] = time.Now()
		}
		mu.Unlock()
		if err != nil {
			break
		}
		if first && i+1 == unauthPerConn {
			onReady()
		}
	}
	c.Close()
	wg.Wait()
	how := "the server closed the connection with the call open"
	if ctx.Err() != nil {
		how = openAtEnd
	}
	for range opened {
		out.add(how, 0)
	}
}

const scoreStreamMethod = "/reward.v1.RewardService/ScoreStream"

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// bigRequest is n rollouts with size-byte completions (GSM8K reasoning,
// padded), the row's GSM8K solution as the answer, and no group id, so that
// a stream may send it again; with inline set, the rollouts are scored by
// an inline similarity function instead, their answers as long as their
// completions.
func bigRequest(opts *OverloadOptions, n, size int, inline bool) (preEncoded, error) {
	sc, err := newScenario(&Options{Scenario: GSM8K, Data: opts.Data, GroupSize: Defaults().GroupSize, Seed: Defaults().Seed, CompletionLength: size})
	if err != nil {
		return nil, err
	}
	req := &rewardv1.ScoreRequest{BatchId: "attack", Functions: BaselineFunctions, Rollouts: make([]*rewardv1.Rollout, n)}
	for i := range req.Rollouts {
		r := sc.row(i)
		r.Group = ""
		req.Rollouts[i] = rollout(r)
	}
	if inline {
		req.Functions = nil
		params, err := structpb.NewStruct(map[string]any{"metric": "fuzzy", "reference_field": "answer", "max_chars": size})
		if err != nil {
			return nil, err
		}
		req.Inline = []*rewardv1.FunctionSpec{{Name: "sim", Kind: "similarity", Params: params}}
		for i, r := range req.Rollouts {
			// The reference: other reasoning of the same length.
			r.Fields.Fields["answer"] = structpb.NewStringValue(sc.row(i + n).Completion)
		}
	}
	return encode(req)
}

// unaryAttack sends one request per client, again the moment it is
// answered, with the token: heavy requests, valid ones.
type unaryAttack struct {
	conns
	what string
	req  preEncoded
}

func newUnaryAttack(ctx context.Context, opts *OverloadOptions) (*unaryAttack, error) {
	inline := opts.Attack == AttackSimilarity
	req, err := bigRequest(opts, opts.AttackRollouts, opts.AttackBytes, inline)
	if err != nil {
		return nil, err
	}
	a := &unaryAttack{req: req}
	a.what = fmt.Sprintf("%d client(s), each sending a %s request (%d rollouts × %s) again when answered",
		opts.Attackers, bytesOf(float64(len(req))), opts.AttackRollouts, bytesOf(float64(opts.AttackBytes)))
	if inline {
		a.what = fmt.Sprintf("%d client(s), each sending a request of %d rollouts scored by an inline similarity function (fuzzy) on %d-character texts, again when answered",
			opts.Attackers, opts.AttackRollouts, opts.AttackBytes)
	}
	a.conns, err = dialAll(ctx, &target{addr: opts.Addr, dialOpts: opts.DialOptions}, opts.Attackers)
	return a, err
}

// conns are an attack's gRPC connections, one per client.
type conns []*grpc.ClientConn

// dialAll makes n connections to tgt, or none.
func dialAll(ctx context.Context, tgt *target, n int) (conns, error) {
	var cs conns
	for range n {
		conn, err := tgt.dial(ctx)
		if err != nil {
			cs.close()
			return nil, err
		}
		cs = append(cs, conn)
	}
	return cs, nil
}

func (cs conns) close() {
	for _, c := range cs {
		c.Close()
	}
}

func (a *unaryAttack) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	out := newOutcomes()
	close(ready)
	var wg conc.WaitGroup
	for _, conn := range a.conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				err := conn.Invoke(ctx, scoreMethod, a.req, new(rewardv1.ScoreResponse))
				how := status.Code(err).String()
				if ctx.Err() != nil {
					how = openAtEnd
				}
				out.add(how, time.Since(start))
			}
		})
	}
	wg.Wait()
	return out.result(a.what, codes.OK.String(), codes.ResourceExhausted.String(), openAtEnd)
}

// streamAttack opens ScoreStream calls with the token that send batches and
// never read an answer, on connections with small HTTP/2 windows (64 KiB,
// no BDP estimation) so that unread answers stay on the server; when the
// server ends a stream, another opens.
type streamAttack struct {
	conns
	what string
	req  preEncoded
}

func newStreamAttack(ctx context.Context, opts *OverloadOptions) (*streamAttack, error) {
	req, err := bigRequest(opts, opts.AttackRollouts, opts.AttackBytes, false)
	if err != nil {
		return nil, err
	}
	a := &streamAttack{req: req, what: fmt.Sprintf("%d ScoreStream clients sending %s batches (%d rollouts × %s) and never reading an answer",
		opts.Attackers, bytesOf(float64(len(req))), opts.AttackRollouts, bytesOf(float64(opts.AttackBytes)))}
	a.conns, err = dialAll(ctx, &target{addr: opts.Addr, dialOpts: append([]grpc.DialOption{
		grpc.WithInitialWindowSize(64 << 10), grpc.WithInitialConnWindowSize(64 << 10)}, opts.DialOptions...)}, opts.Attackers)
	return a, err
}

func (a *streamAttack) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	out := newOutcomes()
	var batches, answers atomic.Int64
	close(ready)
	var wg conc.WaitGroup
	desc := &grpc.StreamDesc{StreamName: "ScoreStream", ServerStreams: true, ClientStreams: true}
	for _, conn := range a.conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				how := a.stream(ctx, conn, desc, &batches, &answers)
				out.add(how, time.Since(start))
			}
		})
	}
	wg.Wait()
	r := out.result(a.what, codes.DeadlineExceeded.String(), openAtEnd)
	r.Notes = append(r.Notes, fmt.Sprintf("%d batches sent in all; %d answers taken after the server ended a stream", batches.Load(), answers.Load()))
	return r
}

// stream sends batches on one stream until the server stops it, then reads
// what is left and returns how the stream ended.
func (a *streamAttack) stream(ctx context.Context, conn *grpc.ClientConn, desc *grpc.StreamDesc, batches, answers *atomic.Int64) string {
	s, err := conn.NewStream(ctx, desc, scoreStreamMethod)
	if err != nil {
		if ctx.Err() != nil {
			return openAtEnd
		}
		return status.Code(err).String()
	}
	for s.SendMsg(a.req) == nil {
		batches.Add(1)
	}
	for {
		if err := s.RecvMsg(new(rewardv1.ScoreResponse)); err != nil {
			if ctx.Err() != nil {
				return openAtEnd
			}
			return status.Code(err).String()
		}
		answers.Add(1)
	}
}

// slowAttack is clients HTTP clients, each posting a body of slowBody bytes
// to /v1/score a byte every slowEvery, and doing so again when answered.
type slowAttack struct {
	addr    string
	clients int
	token   string
}

const (
	slowBody  = 1 << 20
	slowEvery = 2 * time.Second
	// dialers bounds the connections an attack opens at once.
	dialers = 64
)

func (a *slowAttack) close() {}

// dialBounded connects to addr with at most cap(slots) dials at once. The
// connection is closed when ctx ends, or by done.
func dialBounded(ctx context.Context, addr string, slots chan struct{}) (conn net.Conn, done func(), err error) {
	slots <- struct{}{}
	var d net.Dialer
	conn, err = d.DialContext(ctx, "tcp", addr)
	<-slots
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	return conn, func() {
		stop()
		conn.Close()
	}, nil
}

func (a *slowAttack) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	out := newOutcomes()
	onReady := readyAfter(a.clients, ready)
	dial := make(chan struct{}, dialers)
	var wg conc.WaitGroup
	for i := range a.clients {
		wg.Go(func() {
			first := true
			for ctx.Err() == nil {
				start := time.Now()
				how := a.post(ctx, dial, first, onReady, time.Duration(i)*slowEvery/time.Duration(a.clients))
				first = false
				out.add(how, time.Since(start))
				if how != "HTTP 408" {
					sleep(ctx, 100*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return out.result(fmt.Sprintf("%d HTTP clients, each sending a %s body to /v1/score a byte every %v", a.clients, bytesOf(slowBody), slowEvery),
		// 429: the memory budget refused a body's reservation.
		"HTTP 408", "HTTP 429", "closed on arrival", "closed without an answer", openAtEnd)
}

// post sends one slow request and returns how it ended. The first byte of
// the body waits offset, so that the clients' bytes spread over slowEvery.
func (a *slowAttack) post(ctx context.Context, dial chan struct{}, first bool, onReady func(), offset time.Duration) string {
	conn, done, err := dialBounded(ctx, a.addr, dial)
	if err != nil {
		if first {
			onReady()
		}
		if ctx.Err() != nil {
			return openAtEnd
		}
		return "dial error"
	}
	defer done()
	auth := ""
	if a.token != "" {
		auth = "Authorization: Bearer " + a.token + "\r\n"
	}
	_, err = fmt.Fprintf(conn, "POST /v1/score HTTP/1.1\r\nHost: rewardd\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", auth, slowBody)
	if first {
		onReady()
	}
	if err != nil {
		return "closed on arrival"
	}
	answered := make(chan string, 1)
	var wg conc.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "closed without an answer"
			return
		}
		resp.Body.Close()
		answered <- fmt.Sprintf("HTTP %d", resp.StatusCode)
	})
	defer conn.Close() // ends the reader when ctx ends first
	wait := offset
	for sent := 0; sent < slowBody; sent++ {
		select {
		case how := <-answered:
			if how == "closed without an answer" && sent == 0 {
				return "closed on arrival"
			}
			return how
		case <-ctx.Done():
			return openAtEnd
		case <-time.After(wait):
		}
		wait = slowEvery
		if _, err := conn.Write([]byte{' '}); err != nil {
			break
		}
	}
	select {
	case how := <-answered:
		return how
	case <-ctx.Done():
		return openAtEnd
	}
}

// idleAttack opens conns connections to each port and leaves them idle:
// HTTP ones after one GET /healthz (kept alive), gRPC ones after the
// HTTP/2 handshake. A connection the server closes is opened again after
// idleRetry.
type idleAttack struct {
	grpcAddr, httpAddr string
	conns              int
}

const idleRetry = 10 * time.Second

func (a *idleAttack) close() {}

func (a *idleAttack) run(ctx context.Context, ready chan<- struct{}) *AttackerResult {
	out := newOutcomes()
	onReady := readyAfter(2*a.conns, ready)
	dial := make(chan struct{}, dialers)
	var wg conc.WaitGroup
	ports := []struct {
		name, addr string
		hold       holdFunc
		open, most atomic.Int64
	}{{name: "http", addr: a.httpAddr, hold: holdHTTP}, {name: "grpc", addr: a.grpcAddr, hold: holdGRPC}}
	for i := range ports {
		p := &ports[i]
		for range a.conns {
			wg.Go(func() {
				var once sync.Once
				for ctx.Err() == nil {
					how := hold(ctx, p.addr, dial, p.hold, func() {
						once.Do(onReady)
						n := p.open.Add(1)
						for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
						}
					}, func() { p.open.Add(-1) })
					once.Do(onReady)
					out.add(p.name+": "+how, 0)
					sleep(ctx, idleRetry)
				}
			})
		}
	}
	wg.Wait()
	r := out.result(fmt.Sprintf("%d idle connections to each port (HTTP: after a GET /healthz, kept alive; gRPC: after the HTTP/2 handshake), each opened again %v after the server closes it", a.conns, idleRetry),
		"http: closed on arrival", "http: closed while idle", "http: "+openAtEnd, "grpc: closed on arrival", "grpc: closed while idle", "grpc: "+openAtEnd)
	r.Notes = append(r.Notes, fmt.Sprintf("most attacker connections established at once: HTTP %d, gRPC %d", ports[0].most.Load(), ports[1].most.Load()))
	return r
}

// holdFunc establishes a connection, calls established once it is in place
// and idle, and then blocks until the server closes it.
type holdFunc func(conn net.Conn, established func()) error

// hold opens a connection to addr, holds it with establish, and says how it
// ended: closed on arrival (before it was established), closed while idle,
// or open when ctx ended. up and down are called when it is established and
// when it ends after that.
func hold(ctx context.Context, addr string, dial chan struct{}, establish holdFunc, up, down func()) string {
	conn, done, err := dialBounded(ctx, addr, dial)
	if err != nil {
		if ctx.Err() != nil {
			return openAtEnd
		}
		return "dial error"
	}
	defer done()
	established := false
	establish(conn, func() {
		established = true
		up()
	})
	if established {
		down()
	}
	switch {
	case ctx.Err() != nil:
		return openAtEnd
	case !established:
		return "closed on arrival"
	}
	return "closed while idle"
}

// holdHTTP sends GET /healthz, reads the answer, and waits for the server to
// close the connection.
func holdHTTP(conn net.Conn, established func()) error {
	if _, err := fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: rewardd\r\n\r\n"); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	established()
	_, err = br.ReadByte()
	return err
}

// holdGRPC does the HTTP/2 handshake and serves the connection (SETTINGS and
// PINGs answered) until the server closes it; it is established once the
// server's SETTINGS are acknowledged.
func holdGRPC(conn net.Conn, established func()) error {
	c := h2raw.New(conn)
	if err := c.Start(); err != nil {
		return err
	}
	return c.Serve(h2raw.Handler{Settled: established})
}
