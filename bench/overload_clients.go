package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// overloadLoad is the valid clients of an overload run: gRPC clients on
// connections kept for the whole run, as trainers keep theirs; HTTP
// clients, each with its kept-alive connection; and the prober, which
// opens a new connection of each kind for every request.
type overloadLoad struct {
	opts      *OverloadOptions
	functions []string
	grpc      *load
	tgt       *target
	// http: the valid HTTP clients' request body and rollouts; nil
	// without HTTP clients.
	http      []*http.Client
	httpBody  []byte
	httpRows  int
	probeGRPC preEncoded
	probeHTTP *http.Client
}

func newOverloadLoad(ctx context.Context, opts *OverloadOptions) (*overloadLoad, error) {
	sc, err := newScenario(&Options{Scenario: GSM8K, Data: opts.Data, GroupSize: Defaults().GroupSize, Wrong: Defaults().Wrong, Seed: Defaults().Seed})
	if err != nil {
		return nil, err
	}
	ld := &overloadLoad{opts: opts, functions: BaselineFunctions, tgt: &target{addr: opts.Addr, dialOpts: opts.DialOptions}}
	request := func(j, n int) (*rewardv1.ScoreRequest, []Row) {
		rows := sc.rows(j*n, n)
		req := &rewardv1.ScoreRequest{BatchId: fmt.Sprint("valid", j), Functions: ld.functions, Rollouts: make([]*rewardv1.Rollout, n)}
		for i, r := range rows {
			req.Rollouts[i] = rollout(r)
		}
		return req, rows
	}
	batches := make([]batch, 4)
	for j := range batches {
		req, rows := request(j, opts.BatchSize)
		enc, err := encode(req)
		if err != nil {
			return nil, err
		}
		batches[j] = batch{rows: rows, encoded: enc}
	}
	conns := make([]*grpc.ClientConn, opts.Clients)
	ld.grpc = &load{conns: conns, batches: batches, functions: ld.functions, progress: noProgress}
	for i := range conns {
		if conns[i], err = ld.tgt.dial(ctx); err != nil {
			ld.close()
			return nil, err
		}
	}
	if opts.HTTPClients > 0 {
		req, _ := request(len(batches), opts.HTTPBatchSize)
		if ld.httpBody, err = protojson.Marshal(req); err != nil {
			ld.close()
			return nil, err
		}
		ld.httpRows = opts.HTTPBatchSize
		for range opts.HTTPClients {
			ld.http = append(ld.http, &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 1}})
		}
		if ld.probeGRPC, err = encode(req); err != nil {
			ld.close()
			return nil, err
		}
		ld.probeHTTP = &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	return ld, nil
}

// probeTimeout bounds a probe's request.
const probeTimeout = 5 * time.Second

func (ld *overloadLoad) close() {
	for _, c := range ld.grpc.conns {
		if c != nil {
			c.Close()
		}
	}
	for _, c := range ld.http {
		c.CloseIdleConnections()
	}
}

// run sends the valid load for d and records it in p.
func (ld *overloadLoad) run(ctx context.Context, d time.Duration, p *Phase) {
	var wg conc.WaitGroup
	start := time.Now()
	wg.Go(func() {
		ld.grpc.duration = d
		p.Valid = clientLoad(ld.grpc.run(ctx, 64), ld.functions)
	})
	if ld.http != nil {
		wg.Go(func() { p.HTTP = clientLoad(ld.runHTTP(ctx, d), ld.functions) })
		probes := map[string]*Requests{"grpc": {Errors: map[string]int{}}, "http": {Errors: map[string]int{}}}
		wg.Go(func() { ld.probe(ctx, d, probes["grpc"], ld.probeGRPCOnce) })
		wg.Go(func() { ld.probe(ctx, d, probes["http"], ld.probeHTTPOnce) })
		defer func() {
			p.Probes = map[string]Requests{}
			for k, r := range probes {
				p.Probes[k] = *r
			}
		}()
	}
	wg.Wait()
	p.Seconds = time.Since(start).Seconds()
}

func clientLoad(lr *loadResult, functions []string) *ClientLoad {
	r := summarize(lr, functions)
	cl := &ClientLoad{Requests: r.Requests, Rollouts: r.Rollouts, RolloutsPerSecond: r.RolloutsPerSecond, Latency: r.Latency}
	if len(r.Notes) > 0 {
		cl.FirstBad = lr.firstBad
	}
	return cl
}

// runHTTP is load.run for the HTTP clients: each posts the body to
// /v1/score again the moment it has its answer, for d.
func (ld *overloadLoad) runHTTP(ctx context.Context, d time.Duration) *loadResult {
	res := &loadResult{tally: newTally(len(ld.functions))}
	t0 := time.Now()
	results := make([][]call, len(ld.http))
	tallies := make([]*tally, len(ld.http))
	bad := make([]string, len(ld.http))
	var wg conc.WaitGroup
	for i, c := range ld.http {
		tallies[i] = newTally(len(ld.functions))
		wg.Go(func() {
			for ctx.Err() == nil && time.Since(t0) < d {
				start := time.Now()
				code, why := ld.postScore(ctx, c, tallies[i])
				if why != "" && bad[i] == "" {
					bad[i] = why
				}
				results[i] = append(results[i], call{start: start.Sub(t0), took: time.Since(start), code: code, rollouts: ld.httpRows})
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(t0)
	for i := range ld.http {
		res.calls = append(res.calls, results[i]...)
		res.tally.add(tallies[i])
		if res.firstBad == "" {
			res.firstBad = bad[i]
		}
	}
	return res
}

// postScore posts the HTTP clients' body with c and returns the outcome:
// OK (an answer with every value), BAD_RESPONSE (a 200 without; why
// says what), "HTTP <status>", or "transport error".
func (ld *overloadLoad) postScore(ctx context.Context, c *http.Client, tl *tally) (code, why string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ld.opts.HTTPAddr+"/v1/score", bytes.NewReader(ld.httpBody))
	if err != nil {
		return "transport error", ""
	}
	req.Header.Set("Content-Type", "application/json")
	if ld.opts.AuthToken != "" {
		req.Header.Set("Authorization", "Bearer "+ld.opts.AuthToken)
	}
	resp, err := c.Do(req)
	if err != nil {
		return transportError(err), ""
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return transportError(err), ""
	case resp.StatusCode != http.StatusOK:
		return fmt.Sprintf("HTTP %d", resp.StatusCode), ""
	}
	if tl == nil {
		return "OK", ""
	}
	var out rewardv1.ScoreResponse
	if err := protojson.Unmarshal(body, &out); err != nil {
		return codeBadResponse, "decode the answer: " + err.Error()
	}
	if why := tl.check(&out, ld.functions, ld.httpRows); why != "" {
		return codeBadResponse, why
	}
	return "OK", ""
}

// transportError names an HTTP request's failure below HTTP.
func transportError(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "transport error: connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "transport error: connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "transport error: broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "transport error: EOF"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "transport error: timeout"
	}
	return "transport error"
}

// probe calls once every ProbeEvery for d (at once again when a call took
// longer), counting the outcomes in r.
func (ld *overloadLoad) probe(ctx context.Context, d time.Duration, r *Requests, once func(context.Context) string) {
	end := time.Now().Add(d)
	for ctx.Err() == nil && time.Now().Before(end) {
		next := time.Now().Add(ld.opts.ProbeEvery)
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		code := once(pctx)
		cancel()
		r.Sent++
		if code == "OK" {
			r.OK++
		} else {
			r.Errors[code]++
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
	}
}

// probeGRPCOnce scores the probe request on a new gRPC connection.
func (ld *overloadLoad) probeGRPCOnce(ctx context.Context) string {
	conn, err := grpc.NewClient(ld.opts.Addr, append([]grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(preEncodedCodec{}))}, ld.opts.DialOptions...)...)
	if err != nil {
		return "dial error"
	}
	defer conn.Close()
	return status.Code(conn.Invoke(ctx, scoreMethod, ld.probeGRPC, new(rewardv1.ScoreResponse))).String()
}

// probeHTTPOnce posts the HTTP body on a new connection.
func (ld *overloadLoad) probeHTTPOnce(ctx context.Context) string {
	code, _ := ld.postScore(ctx, ld.probeHTTP, nil)
	return code
}
