package server_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rewardd/rewardd/internal/h2raw"
	"github.com/rewardd/rewardd/internal/servertest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// liveStack is a server on loopback TCP, both ports bounded by their
// Listeners, as `rewardd serve` runs it.
type liveStack struct {
	grpcAddr, httpAddr string
	client             rewardv1.RewardServiceClient
	registry           *prometheus.Registry
}

func newLiveStack(t *testing.T, configYAML string, auth *server.Auth) *liveStack {
	t.Helper()
	cfg, err := config.Load("test.yml", []byte(configYAML), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, server.Options{Config: cfg, Workers: 2, Auth: auth})
	conn := srv.Dial(t, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	return &liveStack{grpcAddr: srv.GRPCAddr, httpAddr: srv.HTTPAddr, client: rewardv1.NewRewardServiceClient(conn), registry: srv.Metrics()}
}

// gauge reads one series of the stack's metrics.
func (st *liveStack) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	families, err := st.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue series
				}
			}
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s %v", name, labels)
	return 0
}

// eventually polls cond every 10 ms until it holds, failing the test after
// limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rawH2 is an h2raw connection whose frames a goroutine of its own reads,
// recording how each stream ended.
type rawH2 struct {
	t *testing.T
	*h2raw.Conn

	mu    sync.Mutex
	ended map[uint32]string // how each stream ended (see h2raw.Handler)
	pongs map[[8]byte]bool  // the data of the PINGs acknowledged
	event chan struct{}     // a token when ended or pongs grew
	pings uint64            // PINGs sent, to tell them apart
}

// dialH2 connects to addr; the connection is closed, and its reader waited
// for, when the test ends.
func dialH2(t *testing.T, addr string) *rawH2 {
	t.Helper()
	c, err := h2raw.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	h := &rawH2{t: t, Conn: c, ended: map[uint32]string{}, pongs: map[[8]byte]bool{}, event: make(chan struct{}, 1)}
	var wg conc.WaitGroup
	wg.Go(func() {
		c.Serve(h2raw.Handler{
			Ended: func(id uint32, how string) { h.record(func() { h.ended[id] = how }) },
			Pong:  func(data [8]byte) { h.record(func() { h.pongs[data] = true }) },
		})
	})
	t.Cleanup(func() {
		c.Close()
		wg.Wait()
	})
	return h
}

// record changes what h knows under its lock and wakes a waiter.
func (h *rawH2) record(change func()) {
	h.mu.Lock()
	change()
	h.mu.Unlock()
	select {
	case h.event <- struct{}{}:
	default:
	}
}

// open sends the HEADERS of a call to method, with the given extra headers,
// and never any DATA; it returns the stream id.
func (h *rawH2) open(method string, extra ...string) uint32 {
	h.t.Helper()
	id, err := h.Open(method, extra...)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// how returns how stream id ended, "" while it is open.
func (h *rawH2) how(id uint32) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ended[id]
}

// wait waits until done holds (under h's lock) or limit passes, and
// reports whether done held.
func (h *rawH2) wait(limit time.Duration, done func() bool) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		h.mu.Lock()
		ok := done()
		h.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-h.event:
		case <-timer.C:
			h.mu.Lock()
			defer h.mu.Unlock()
			return done()
		}
	}
}

// sync returns once the server has read every frame sent so far: it answers
// a PING after them.
func (h *rawH2) sync() {
	h.t.Helper()
	h.pings++
	var data [8]byte
	binary.BigEndian.PutUint64(data[:], h.pings)
	if err := h.Ping(data); err != nil {
		h.t.Fatal(err)
	}
	if !h.wait(10*time.Second, func() bool { return h.pongs[data] }) {
		h.t.Fatal("no answer to the PING within 10 s")
	}
}

// await waits until every stream in ids has ended or limit passes; it
// returns how many ended.
func (h *rawH2) await(ids []uint32, limit time.Duration) int {
	answered := func() int {
		n := 0
		for _, id := range ids {
			if h.ended[id] != "" {
				n++
			}
		}
		return n
	}
	h.wait(limit, func() bool { return answered() == len(ids) })
	h.mu.Lock()
	defer h.mu.Unlock()
	return answered()
}

// score is a one-rollout request.
func oneRollout() *rewardv1.ScoreRequest {
	return &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "<answer>1</answer>", Fields: answerField("1")}}}
}

// TestCallsWithoutTheTokenHoldNothing (finding: an unauthenticated client
// blocked all scoring): Score calls without the token, whose messages never
// come, are each answered UNAUTHENTICATED on their headers alone, and a
// client with the token is served meanwhile. Calls with the token
// whose messages never come hold their slots only until
// limits.read_timeout, then get DEADLINE_EXCEEDED.
func TestCallsWithoutTheTokenHoldNothing(t *testing.T) {
	st := newLiveStack(t, testConfig+"  read_timeout: 3s\n  max_inflight_requests: 8\n", server.NewAuth("s3cret"))
	authed := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret")

	// Each refusal after the first waits longer (10 ms more each): 16 take
	// 1.2 s in all.
	attacker := dialH2(t, st.grpcAddr)
	var ids []uint32
	for range 16 {
		ids = append(ids, attacker.open(rewardv1.RewardService_Score_FullMethodName))
	}
	if _, err := st.client.Score(authed, oneRollout()); err != nil {
		t.Errorf("a client with the token, while calls without it are refused: %v", err)
	}
	if n := attacker.await(ids, 10*time.Second); n != len(ids) {
		t.Fatalf("%d of %d calls without the token answered on their headers, want all", n, len(ids))
	}
	for _, id := range ids {
		if got := attacker.how(id); got != codes.Unauthenticated.String() {
			t.Errorf("stream %d: %s, want %s", id, got, codes.Unauthenticated)
		}
	}
	if _, err := st.client.Score(authed, oneRollout()); err != nil {
		t.Errorf("a client with the token, while calls without it are open: %v", err)
	}

	// With the token but no message: they hold the 8 slots until the read
	// timeout, then are cut.
	slow := dialH2(t, st.grpcAddr)
	ids = ids[:0]
	for range 8 {
		ids = append(ids, slow.open(rewardv1.RewardService_Score_FullMethodName, "authorization", "Bearer s3cret"))
	}
	slow.sync()
	// Each takes its slot in its own goroutine, once its message's memory
	// is reserved: soon after its headers are read.
	eventually(t, 5*time.Second, "a call refused while 8 message-less calls are open", func() bool {
		_, err := st.client.Score(authed, oneRollout())
		return status.Code(err) == codes.ResourceExhausted
	})
	if n := slow.await(ids, 10*time.Second); n != len(ids) {
		t.Fatalf("%d of %d calls whose message never came were cut, want all", n, len(ids))
	}
	for _, id := range ids {
		if got := slow.how(id); got != codes.DeadlineExceeded.String() {
			t.Errorf("stream %d: %s, want %s", id, got, codes.DeadlineExceeded)
		}
	}
	if _, err := st.client.Score(authed, oneRollout()); err != nil {
		t.Errorf("after the read timeout: %v", err)
	}
	if got := st.metric(t, "rewardd_timeouts_total", "stage", "read"); got != 8 {
		t.Errorf("rewardd_timeouts_total{stage=read} = %v, want 8", got)
	}
	eventually(t, 5*time.Second, "every reservation given back", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") == 0
	})
}

// TestBearerSchemeAnyCase: RFC 7235's auth scheme is case-insensitive.
func TestBearerSchemeAnyCase(t *testing.T) {
	st := newLiveStack(t, testConfig, server.NewAuth("s3cret"))
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", scheme+" s3cret")
		if _, err := st.client.Score(ctx, oneRollout()); err != nil {
			t.Errorf("gRPC with %q: %v", scheme, err)
		}
		r, _ := http.NewRequest(http.MethodPost, "http://"+st.httpAddr+"/v1/score", strings.NewReader(`{"rollouts": [{"completion": "1"}]}`))
		r.Header.Set("Authorization", scheme+" s3cret")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HTTP with %q: %d", scheme, resp.StatusCode)
		}
	}
}

// bigRequest is n rollouts of size bytes each.
func bigRequest(n, size int) *rewardv1.ScoreRequest {
	req := &rewardv1.ScoreRequest{Rollouts: make([]*rewardv1.Rollout, n)}
	filler := strings.Repeat("step by step, ", size/14+1)[:size]
	for i := range req.Rollouts {
		req.Rollouts[i] = &rewardv1.Rollout{Completion: filler, Fields: answerField(strconv.Itoa(i))}
	}
	return req
}

// TestMemoryBudgetRefusesWhatDoesNotFit (finding: memory had no bound in
// bytes): 16 concurrent 8 MB requests against a budget that holds a few of
// them: each is answered OK or RESOURCE_EXHAUSTED naming the memory budget
// (they wait for room up to limits.read_timeout, so most are served in
// turn), what they reserved never passed what requests may reserve, and
// it is all given back.
func TestMemoryBudgetRefusesWhatDoesNotFit(t *testing.T) {
	st := newLiveStack(t, testConfig+"  memory_budget: 128MiB\n  max_message_bytes: 16777216\n", nil)
	req := bigRequest(2048, 4096)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	for range 16 {
		wg.Go(func() {
			_, err := st.client.Score(context.Background(), req)
			mu.Lock()
			defer mu.Unlock()
			codesSeen[status.Code(err)]++
			if status.Code(err) == codes.ResourceExhausted && !strings.Contains(err.Error(), "memory") && !strings.Contains(err.Error(), "capacity") {
				t.Errorf("RESOURCE_EXHAUSTED that names neither the memory budget nor capacity: %v", err)
			}
		})
	}
	stop := make(chan struct{})
	var peak float64
	var sampling sync.WaitGroup
	sampling.Go(func() {
		for {
			peak = max(peak, st.metric(t, "rewardd_memory_reserved_bytes"))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	wg.Wait()
	close(stop)
	sampling.Wait()
	if codesSeen[codes.OK] == 0 || codesSeen[codes.OK]+codesSeen[codes.ResourceExhausted] != 16 {
		t.Errorf("answers by code: %v, want some OK, the rest RESOURCE_EXHAUSTED, nothing else", codesSeen)
	}
	if capacity := st.metric(t, "rewardd_memory_request_capacity_bytes"); peak > capacity || peak < 32<<20 {
		t.Errorf("at most %.1f MiB reserved at once, want several requests' worth and at most the %.1f MiB requests may reserve", peak/(1<<20), capacity/(1<<20))
	}
	eventually(t, 5*time.Second, "every reservation given back", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") == 0
	})
	// One at a time, every one fits.
	if _, err := st.client.Score(context.Background(), req); err != nil {
		t.Errorf("alone: %v", err)
	}
}

// TestConfigRefusesMessagesTheBudgetCannotHold: a max_message_bytes over a
// quarter of what requests may reserve is a config error, and the default
// is lowered to fit.
func TestConfigRefusesMessagesTheBudgetCannotHold(t *testing.T) {
	_, err := config.Load("t.yml", []byte(testConfig+"  memory_budget: 100MiB\n  max_message_bytes: 64MiB\n"), builtin.Registry())
	if err == nil || !strings.Contains(err.Error(), "limits.max_message_bytes") {
		t.Errorf("err = %v, want one about limits.max_message_bytes", err)
	}
	cfg, err := config.Load("t.yml", []byte(testConfig+"  memory_budget: 100MiB\n"), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if got, most := int64(cfg.Limits.MaxMessageBytes), cfg.Limits.RequestMemory()/4; got > most || got < most-(1<<20) {
		t.Errorf("default max_message_bytes = %d under a 100 MiB budget, want just under %d", got, most)
	}
}

// TestConfigCountsConnectionsAgainstTheBudget (the `idle` load: the open
// connections' transport buffers were outside the budget): what
// max_connections connections may hold comes out of what requests may
// reserve; more than an eighth of the budget is a config error, and the
// default is lowered to fit.
func TestConfigCountsConnectionsAgainstTheBudget(t *testing.T) {
	_, err := config.Load("t.yml", []byte(testConfig+"  memory_budget: 64MiB\n  max_connections: 1024\n"), builtin.Registry())
	if err == nil || !strings.Contains(err.Error(), "limits.max_connections") {
		t.Errorf("err = %v, want one about limits.max_connections", err)
	}
	cfg, err := config.Load("t.yml", []byte(testConfig+"  memory_budget: 64MiB\n"), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	lim := cfg.Limits
	if got := lim.TransportMemory(); got > 8<<20 || got < 7<<20 || got != int64(lim.MaxConnections)*config.ConnectionMemory {
		t.Errorf("default max_connections %d under a 64 MiB budget holds %d bytes, want just under an eighth of it", lim.MaxConnections, got)
	}
	budget := float64(lim.MemoryBudget)
	if got, want := lim.RequestMemory(), int64(budget*0.7)-lim.TransportMemory(); got != want {
		t.Errorf("RequestMemory = %d, want %d (the request share less the connections')", got, want)
	}
}

// slowPost sends a request whose body comes one byte per interval, and
// returns the status code once the server answers.
func slowPost(addr, path string, size int, interval time.Duration, stop <-chan struct{}) (int, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: rewardd\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, size)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for range size {
		select {
		case code := <-answered:
			return code, nil
		case <-stop:
			return 0, errors.New("stopped")
		case <-tick.C:
			conn.Write([]byte(" "))
		}
	}
	return <-answered, nil
}

// TestSlowBodiesHoldNoSlot (finding: clients sending a body one byte at a
// time held every admission slot): while 8 such clients hold as many
// requests open as the server admits, valid requests are served; the slow
// ones are answered 408 after limits.read_timeout.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	st := newLiveStack(t, testConfig+"  read_timeout: 1500ms\n  max_inflight_requests: 4\n", nil)
	stop := make(chan struct{})
	defer close(stop)
	codesC := make(chan int, 8)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range 8 {
		wg.Go(func() {
			code, err := slowPost(st.httpAddr, "/v1/score", 4096, 100*time.Millisecond, stop)
			if err == nil {
				codesC <- code
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // the slow bodies have started
	body := []byte(`{"rollouts": [{"completion": "<answer>1</answer>", "fields": {"answer": "1"}}]}`)
	for i := range 10 {
		if code, out := post(t, "http://"+st.httpAddr+"/v1/score", body); code != http.StatusOK {
			t.Fatalf("valid request %d while slow bodies arrive: %d %s", i, code, out)
		}
	}
	for range 8 {
		select {
		case code := <-codesC:
			if code != http.StatusRequestTimeout {
				t.Errorf("slow body answered %d, want 408", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a slow body was not cut within 10 s")
		}
	}
	if got := st.metric(t, "rewardd_timeouts_total", "stage", "read"); got != 8 {
		t.Errorf("rewardd_timeouts_total{stage=read} = %v, want 8", got)
	}
}

// TestIdleConnectionsBounded (finding: 20,000 idle keep-alive connections
// exhausted the file descriptors): 200 connections to each port of a
// server that holds at most 32 open: each port closes the connections idle
// longest to make room, never more than 32 stay open, and a new client of
// either port is served.
func TestIdleConnectionsBounded(t *testing.T) {
	st := newLiveStack(t, testConfig+"  max_connections: 32\n", nil)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, addr := range []string{st.httpAddr, st.grpcAddr} {
		for range 200 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
	}
	for _, port := range []string{"http", "grpc"} {
		eventually(t, 10*time.Second, port+": every connection accepted, 168 closed to make room", func() bool {
			return st.metric(t, "rewardd_connections_closed_total", "port", port) >= 168
		})
		if got := st.metric(t, "rewardd_connections", "port", port); got > 32 {
			t.Errorf("%s: %v connections open, want at most 32", port, got)
		}
	}
	// New clients get in: an idle connection makes room.
	body := []byte(`{"rollouts": [{"completion": "1"}]}`)
	if code, out := post(t, "http://"+st.httpAddr+"/v1/score", body); code != http.StatusOK {
		t.Errorf("a new HTTP client with the port full of idle connections: %d %s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := st.client.Score(ctx, oneRollout()); err != nil {
		t.Errorf("a new gRPC client with the port full of idle connections: %v", err)
	}
}

// TestClosingConnectionsMakeRoomFirst (finding: slow bodies and idle
// connections): a connection net/http is closing (its last answer sent,
// the half second it waits for the client to close) is the one closed to
// make room for a new connection on a full port, not a connection that
// waits for its first request. With max_connections 2: A's body is too
// slow and is answered 408, B connects and waits, C connects: A makes
// room, and B and C are both answered.
func TestClosingConnectionsMakeRoomFirst(t *testing.T) {
	st := newLiveStack(t, testConfig+"  max_connections: 2\n  read_timeout: 300ms\n", nil)
	const body = `{"rollouts": [{"completion": "1"}]}`
	request := func(length int) string {
		return "POST /v1/score HTTP/1.1\r\nHost: rewardd\r\nContent-Type: application/json\r\n" +
			"Content-Length: " + strconv.Itoa(length) + "\r\n\r\n" + body
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", st.httpAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c
	}
	a := dial()
	// More than net/http drains after an answer (256 KiB): it closes.
	if _, err := io.WriteString(a, request(1<<20)); err != nil {
		t.Fatal(err)
	}
	// To the end of what A is sent: net/http has shut its sending side
	// after the 408, and waits for A to close (which it does not).
	if out, err := io.ReadAll(a); err != nil || !strings.HasPrefix(string(out), "HTTP/1.1 408") {
		t.Fatalf("A: %v %q", err, out)
	}
	b, c := dial(), dial()
	for name, conn := range map[string]net.Conn{"B": b, "C": c} {
		if _, err := io.WriteString(conn, request(len(body))); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s, with A closing and the port full: %v %v; want it answered", name, resp, err)
			continue
		}
		resp.Body.Close()
	}
	if n := st.metric(t, "rewardd_connections_closed_total", "port", "http"); n != 1 {
		t.Errorf("%v connections closed to make room, want 1 (A)", n)
	}
}

// TestStreamThatNeverReadsIsCut (finding: ScoreStream clients that send
// batches and never read held ~320 MiB each, outside admission): a client
// that stops reading its answers is cut after limits.write_timeout, what
// its batches reserved is given back, and other clients are served
// meanwhile.
func TestStreamThatNeverReadsIsCut(t *testing.T) {
	st := newLiveStack(t, testConfig+"  write_timeout: 1s\n", nil)
	// A small fixed receive window, so that unread answers fill it.
	conn, err := grpc.NewClient(st.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := rewardv1.NewRewardServiceClient(conn).ScoreStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The client sends until flow control stops it, and never reads.
	var sender sync.WaitGroup
	defer func() {
		cancel()
		sender.Wait()
	}()
	sender.Go(func() {
		req := bigRequest(2048, 64)
		for i := range 32 {
			req.BatchId = strconv.Itoa(i)
			if err := stream.Send(req); err != nil {
				return
			}
		}
	})
	eventually(t, 30*time.Second, "the stream is cut for not reading", func() bool {
		return st.metric(t, "rewardd_timeouts_total", "stage", "write") >= 1
	})
	if _, err := st.client.Score(context.Background(), oneRollout()); err != nil {
		t.Errorf("another client while the stream is stuck: %v", err)
	}
	eventually(t, 10*time.Second, "every reservation given back", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") == 0
	})
	// The client finds the stream ended with the reason.
	var last error
	for range 64 {
		if _, last = stream.Recv(); last != nil {
			break
		}
	}
	if status.Code(last) != codes.DeadlineExceeded {
		t.Errorf("the client's stream ends with %v, want DEADLINE_EXCEEDED", last)
	}
}

// TestStreamIdleIsCut: a stream that sends nothing for
// limits.stream_idle_timeout is ended with DEADLINE_EXCEEDED, counted by
// stage.
func TestStreamIdleIsCut(t *testing.T) {
	st := newLiveStack(t, testConfig+"  stream_idle_timeout: 500ms\n", nil)
	stream, err := st.client.ScoreStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("an idle stream ends with %v, want DEADLINE_EXCEEDED", err)
	}
	if got := st.metric(t, "rewardd_timeouts_total", "stage", "stream_idle"); got != 1 {
		t.Errorf("rewardd_timeouts_total{stage=stream_idle} = %v, want 1", got)
	}
}

// TestSplitGroupIsWarned (finding: a group split across two unary calls
// silently got advantage 0): the answer says which rollouts are alone in
// their group.
func TestSplitGroupIsWarned(t *testing.T) {
	st := newStack(t, testConfig)
	grpo := &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE}
	whole := &rewardv1.ScoreRequest{Aggregation: grpo, Rollouts: []*rewardv1.Rollout{
		{Group: "q1", Completion: "<answer>1</answer>", Fields: answerField("1")},
		{Group: "q1", Completion: "<answer>2</answer>", Fields: answerField("1")},
	}}
	resp, err := st.client.Score(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetWarnings()) != 0 {
		t.Errorf("a whole group: warnings %q", resp.GetWarnings())
	}
	half := &rewardv1.ScoreRequest{Aggregation: grpo, Rollouts: whole.GetRollouts()[:1]}
	resp, err = st.client.Score(context.Background(), half)
	if err != nil {
		t.Fatal(err)
	}
	if w := resp.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], `"q1"`) || resp.GetAdvantages()[0] != 0 {
		t.Errorf("half a group: warnings %q, advantage %v; want one warning naming q1, advantage 0", w, resp.GetAdvantages())
	}
}

// TestCancelledCallsAreNotInternalErrors: a client that sends a whole Score
// message and cancels the call at once (RST_STREAM) may end the call while
// its handler still works on it; the ticket the tap took is given back
// then, and what the handler does next with it fails. That failure is the
// cancellation, counted as Canceled, never an internal error.
func TestCancelledCallsAreNotInternalErrors(t *testing.T) {
	st := newLiveStack(t, testConfig, nil)
	msg, err := proto.Marshal(bigRequest(64, 1024))
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(msg)))
	copy(frame[5:], msg)
	c := dialH2(t, st.grpcAddr)
	const calls = 200
	var ids []uint32
	for range calls {
		id := c.open(rewardv1.RewardService_Score_FullMethodName)
		for rest := frame; len(rest) > 0; {
			n := min(len(rest), 16<<10)
			if err := c.WriteData(id, n == len(rest), rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := c.Cancel(id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	c.sync()
	eventually(t, 10*time.Second, "every cancelled call's reservation given back", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") == 0
	})
	families, err := st.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "rewardd_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == codes.Internal.String() && m.GetCounter().GetValue() > 0 {
					t.Errorf("%v of %d cancelled calls counted as internal errors", m.GetCounter().GetValue(), calls)
				}
			}
		}
	}
	if _, err := st.client.Score(context.Background(), oneRollout()); err != nil {
		t.Errorf("after the cancelled calls: %v", err)
	}
}

// TestDecodingIsRequestWork (finding: one request can starve the others):
// a gRPC request's message is copied and decoded as pool work of its
// request, in turns with the other requests' spans, and counted in its
// worker time. With limits.max_request_work spent by decoding 16 MiB,
// no span of the request runs: every rollout gets an Error naming the
// limit (were decoding outside the pool, its first spans would score).
func TestDecodingIsRequestWork(t *testing.T) {
	st := newLiveStack(t, testConfig+"  max_request_work: 1us\n  memory_budget: 512MiB\n  max_message_bytes: 33554432\n", nil)
	resp, err := st.client.Score(context.Background(), bigRequest(4096, 4096))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range resp.GetFunctions() {
		for i, s := range f.GetStatus() {
			if s != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || !strings.Contains(f.GetErrors()[int32(i)], "limits.max_request_work") {
				t.Fatalf("%s of rollout %d: %v %q; want every rollout an Error naming limits.max_request_work, as decoding used it up", f.GetName(), i, s, f.GetErrors()[int32(i)])
			}
		}
	}
}

// TestSlowRolloutsAreCutIntoShortSpans (finding: one request can starve the
// others): the worker is shared between requests span by span, so a
// request of rollouts slow per byte is cut into spans of about a
// millisecond of work each, here one rollout per span (a 16,000-character
// fuzzy match takes milliseconds), not into spans of 256 KiB that would
// hold the worker for tens of them; a small request sent meanwhile is
// answered before it.
func TestSlowRolloutsAreCutIntoShortSpans(t *testing.T) {
	st := newLiveStack(t, `
functions:
  - name: format
    kind: format
    tags: [think, answer]
  - name: alike
    kind: similarity
    metric: fuzzy
    max_chars: 30000
limits:
  max_completion_bytes: 30000
`, nil)
	const n, size = 24, 16000
	big := &rewardv1.ScoreRequest{Functions: []string{"alike"}, Rollouts: make([]*rewardv1.Rollout, n)}
	for i := range big.Rollouts {
		// Texts of two alphabets apart from each other.
		big.Rollouts[i] = &rewardv1.Rollout{
			Completion: strings.Repeat("abcdefgh"[i%8:i%8+1]+"xyz", size/4),
			Fields:     answerField(strings.Repeat("azby", size/4)),
		}
	}
	order := make(chan string, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := st.client.Score(context.Background(), big); err != nil {
			t.Errorf("the large request: %v", err)
		}
		order <- "large"
	})
	eventually(t, 10*time.Second, "the large request scoring", func() bool {
		return st.metric(t, "rewardd_pool_inflight") > 0
	})
	small := &rewardv1.ScoreRequest{Functions: []string{"format"}, Rollouts: []*rewardv1.Rollout{{Completion: "<think>1</think><answer>1</answer>"}}}
	if _, err := st.client.Score(context.Background(), small); err != nil {
		t.Errorf("the small request: %v", err)
	}
	order <- "small"
	wg.Wait()
	if first := <-order; first != "small" {
		t.Errorf("the %s request was answered first, want the small one", first)
	}
	spans := st.histogramCount(t, "rewardd_function_duration_seconds", "function", "alike")
	t.Logf("the %d rollouts of the large request ran in %d spans", n, spans)
	if spans < n/2 {
		t.Errorf("the %d rollouts of the large request ran in %d spans, want one rollout a span (at least %d spans)", n, spans, n/2)
	}
}

// histogramCount reads the number of observations of one histogram series.
func (st *liveStack) histogramCount(t *testing.T, name string, label, value string) uint64 {
	t.Helper()
	families, err := st.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	t.Fatalf("no metric %s{%s=%q}", name, label, value)
	return 0
}
