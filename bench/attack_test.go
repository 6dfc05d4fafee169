package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/rewardd/rewardd/internal/servertest"
	"github.com/rewardd/rewardd/server"
)

// liveServer is a server as `rewardd serve` runs it, in this process: gRPC
// and HTTP on loopback, each port bounded by its connection limit.
func liveServer(t *testing.T, limits string, auth *server.Auth) (grpcAddr, httpAddr string) {
	t.Helper()
	srv := servertest.Start(t, server.Options{Config: defaultConfig(t, "limits: {"+limits+"}\n"), Workers: 1, Auth: auth})
	return srv.GRPCAddr, srv.HTTPAddr
}

// TestOverloadAttacks runs every attack, small and short, against a live
// server in this process, and checks what the report must hold whatever
// the machine's speed: every phase measured, every attack's call counted
// once with how it ended, the outcomes the attack makes the server give
// (and the server's metrics agreeing), and the bar checked.
func TestOverloadAttacks(t *testing.T) {
	needData(t)
	for _, tc := range []overloadAttack{
		{attack: AttackUnauth, limits: "memory_budget: 256MiB", auth: true, opts: OverloadOptions{Attackers: 2},
			check: checkUnauthAttack},
		{attack: AttackMemory, limits: "memory_budget: 64MiB, max_message_bytes: 8388608", opts: OverloadOptions{Attackers: 8, AttackRollouts: 256, AttackBytes: 16 << 10},
			check: checkMemoryAttack},
		{attack: AttackStreams, limits: "memory_budget: 64MiB, max_message_bytes: 8388608, write_timeout: 300ms",
			// checkStreamsAttack reads a gauge sampled every second: 3 s sample it mid-attack.
			opts:  OverloadOptions{Attackers: 2, AttackRollouts: 256, AttackBytes: 16 << 10, Duration: 3 * time.Second},
			check: checkStreamsAttack},
		{attack: AttackSlow, limits: "read_timeout: 300ms", opts: OverloadOptions{Attackers: 4},
			check: checkSlowAttack},
		{attack: AttackIdle, limits: "max_connections: 16", opts: OverloadOptions{Attackers: 40},
			check: checkIdleAttack},
		{attack: AttackSimilarity, limits: "memory_budget: 256MiB", opts: OverloadOptions{Attackers: 1, AttackRollouts: 4, AttackBytes: 20000, BatchSize: 1},
			check: checkSimilarityAttack},
	} {
		t.Run(tc.attack, func(t *testing.T) {
			r, err := Overload(context.Background(), tc.options(t))
			if err != nil {
				t.Fatal(err)
			}
			checkOverload(t, r)
			tc.check(t, r)
		})
	}
}

// overloadAttack is one attack of TestOverloadAttacks: the server's limits,
// whether it asks for a token, the attack's options and what its report
// must hold besides what checkOverload checks.
type overloadAttack struct {
	attack, limits string
	auth           bool
	opts           OverloadOptions
	check          func(t *testing.T, r *OverloadResult)
}

// options are tc.opts, small and short, against a live server in this
// process with tc's limits (and token).
func (tc overloadAttack) options(t *testing.T) OverloadOptions {
	var auth *server.Auth
	opts := tc.opts
	opts.Attack, opts.Data, opts.ServerPID = tc.attack, dataPath, os.Getpid()
	opts.Capacity, opts.Recover = 300*time.Millisecond, 300*time.Millisecond
	if opts.Duration == 0 {
		opts.Duration = time.Second
	}
	opts.MemoryBudget = 64 << 30 // the test process's RSS is the test's: not the bar here
	if opts.BatchSize == 0 {
		opts.BatchSize = 16
	}
	opts.DialOptions = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if tc.auth {
		auth = server.NewAuth("s3cret")
		opts.AuthToken = "s3cret"
		opts.DialOptions = append(opts.DialOptions, grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, o ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret"), method, req, reply, cc, o...)
		}))
	}
	opts.Addr, opts.HTTPAddr = liveServer(t, tc.limits, auth)
	return opts
}

// checkUnauthAttack: the calls without a token are refused UNAUTHENTICATED, and the server counts them.
func checkUnauthAttack(t *testing.T, r *OverloadResult) {
	a := r.Phases[1].Attacker
	got := a.Outcomes[codes.Unauthenticated.String()]
	if got == 0 || got+a.Outcomes[openAtEnd] != a.Sent {
		t.Errorf("outcomes %v of %d calls, want each UNAUTHENTICATED or open at the end", a.Outcomes, a.Sent)
	}
	served := counter(t, r.Phases[1], `rewardd_requests_total{code="Unauthenticated",method="Score"}`) +
		counter(t, r.Phases[1], `rewardd_requests_total{code="Unauthenticated",method="ScoreStream"}`)
	if served < float64(got) {
		t.Errorf("the server counts %v calls refused UNAUTHENTICATED, the attacker got %d", served, got)
	}
}

// checkMemoryAttack: batches over the memory budget are refused RESOURCE_EXHAUSTED.
func checkMemoryAttack(t *testing.T, r *OverloadResult) {
	a := r.Phases[1].Attacker
	if a.Outcomes[codes.ResourceExhausted.String()] == 0 || counter(t, r.Phases[1], "rewardd_memory_rejected_total") == 0 {
		t.Errorf("8 clients × 4 MiB against a 64 MiB budget: outcomes %v, want some RESOURCE_EXHAUSTED", a.Outcomes)
	}
}

// checkStreamsAttack: streams that never read have their batches refused, are cut, or are held back within the budget.
func checkStreamsAttack(t *testing.T, r *OverloadResult) {
	// The server answers a batch that does not fit on the stream, cuts a
	// stream whose answers are not taken, or stops reading a stream while
	// streams hold their share of the budget; never more than the budget.
	p := r.Phases[1]
	refused, _ := p.Server.metric(`rewardd_requests_total{code="ResourceExhausted",method="ScoreStream"}`)
	cut, _ := p.Server.metric(`rewardd_timeouts_total{stage="write"}`)
	held, _ := p.Server.metric("rewardd_memory_reserved_bytes")
	capacity, _ := p.Server.metric("rewardd_memory_request_capacity_bytes")
	if p.Attacker.Sent == 0 || refused.Increase+cut.Increase == 0 && held.Max < 8<<20 || held.Max > capacity.Max {
		t.Errorf("streams that never read against a 64 MiB budget: %v batches refused, %v streams cut, at most %v of %v bytes reserved; attacker %+v",
			refused.Increase, cut.Increase, held.Max, capacity.Max, p.Attacker)
	}
}

// checkSlowAttack: slow bodies end in HTTP 408 at the read timeout, each counted by the server.
func checkSlowAttack(t *testing.T, r *OverloadResult) {
	a := r.Phases[1].Attacker
	if a.Outcomes["HTTP 408"] == 0 || counter(t, r.Phases[1], `rewardd_timeouts_total{stage="read"}`) < float64(a.Outcomes["HTTP 408"]) {
		t.Errorf("slow bodies, read_timeout 300ms: outcomes %v, want HTTP 408, each counted by the server", a.Outcomes)
	}
}

// checkIdleAttack: idle connections past the limit are closed, and never more than the limit are open.
func checkIdleAttack(t *testing.T, r *OverloadResult) {
	for _, port := range []string{"grpc", "http"} {
		m, ok := r.Phases[1].Server.metric(`rewardd_connections{port="` + port + `"}`)
		if !ok || m.Max > 16 {
			t.Errorf("%s: open connections %+v, want at most 16", port, m)
		}
		if counter(t, r.Phases[1], `rewardd_connections_closed_total{port="`+port+`"}`) == 0 {
			t.Errorf("%s: 40 idle connections against 16: none closed", port)
		}
	}
}

// checkSimilarityAttack: the attacker sent its similarity requests.
func checkSimilarityAttack(t *testing.T, r *OverloadResult) {
	if a := r.Phases[1].Attacker; a.Sent == 0 {
		t.Errorf("no similarity request sent: %+v", a)
	}
}

// checkOverload checks what every overload report holds.
func checkOverload(t *testing.T, r *OverloadResult) {
	t.Helper()
	if len(r.Phases) != 3 {
		t.Fatalf("%d phases, want 3", len(r.Phases))
	}
	for _, p := range r.Phases {
		v := p.Valid
		if v.Requests.OK == 0 || v.Requests.OK+v.Requests.Failed() != v.Requests.Sent {
			t.Errorf("%s: valid requests %+v: want some OK, and sent = OK + failed", p.Name, v.Requests)
		}
		if v.Requests.Errors[codeBadResponse] > 0 {
			t.Errorf("%s: bad answers: %s", p.Name, v.FirstBad)
		}
		if p.Server.CPUSeconds <= 0 || p.Server.PeakRSSBytes <= 0 || p.Server.MaxOpenFiles <= 0 {
			t.Errorf("%s: server figures from /proc missing: %+v", p.Name, p.Server)
		}
		if st := p.Steal; st == nil || len(st.ServerCPUs) == 0 || len(st.LoadGeneratorCPUs) == 0 || st.Server < 0 || st.Server > 1 {
			t.Errorf("%s: steal %+v: want the CPUs read and shares in [0, 1]", p.Name, st)
		}
		if _, ok := p.Server.metric(`rewardd_requests_total{code="OK",method="Score"}`); !ok {
			t.Errorf("%s: no metrics read", p.Name)
		}
		if (p.Attacker != nil) != (p.Name == "attack") {
			t.Errorf("%s: attacker result %v", p.Name, p.Attacker)
		}
	}
	a := r.Phases[1].Attacker
	n := 0
	for _, c := range a.Outcomes {
		n += c
	}
	if n != a.Sent || a.Sent == 0 {
		t.Errorf("attacker: %d sent, outcomes %v add up to %d", a.Sent, a.Outcomes, n)
	}
	if len(r.Verdict) < 2 {
		t.Errorf("verdict %v: want the memory, valid share and attacker checks", r.Verdict)
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"capacity", "attack", "recovery", "verdict", "rewardd_requests_total"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteJSON(&js, r); err != nil || !json.Valid(js.Bytes()) {
		t.Errorf("JSON report: %v", err)
	}
}

// counter is a counter's increase over phase p, failing the test when the
// server has no such series.
func counter(t *testing.T, p *Phase, series string) float64 {
	t.Helper()
	m, ok := p.Server.metric(series)
	if !ok {
		t.Fatalf("%s: no series %s", p.Name, series)
	}
	return m.Increase
}

// TestVerdictSaysWhenTheMachineWasNotQuiet checks that the share check
// names the steal when it was read, and says the machine was not quiet
// when the hypervisor took more than noisyShare of either phase on either
// side, without changing the share the bar checks.
func TestVerdictSaysWhenTheMachineWasNotQuiet(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		capSteal, attackSteal *Steal
		rate                  float64 // under attack; 100 at capacity
		pass, steal, noisy    bool
	}{
		{"no reading, passes", nil, nil, 85, true, false, false},
		{"no reading, fails", nil, nil, 75, false, false, false},
		{"quiet", &Steal{Server: 0.01}, &Steal{LoadGenerator: 0.02}, 79, false, true, false},
		{"steal on the server's CPUs under attack", &Steal{}, &Steal{Server: 0.2}, 75, false, true, true},
		{"steal on the load generator's at capacity", &Steal{LoadGenerator: 0.2}, &Steal{}, 85, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &OverloadResult{Phases: []*Phase{
				{Name: "capacity", Valid: &ClientLoad{RolloutsPerSecond: 100}, Steal: tc.capSteal},
				{Name: "attack", Valid: &ClientLoad{RolloutsPerSecond: tc.rate}, Steal: tc.attackSteal},
			}}
			checks := verdict(r, &OverloadOptions{})
			if len(checks) != 1 || checks[0].OK != tc.pass {
				t.Fatalf("checks %+v: want one, passed %v", checks, tc.pass)
			}
			what := checks[0].What
			if strings.Contains(what, "steal") != tc.steal || strings.Contains(what, "not quiet") != tc.noisy {
				t.Errorf("check %q: want steal named %v, not quiet said %v", what, tc.steal, tc.noisy)
			}
		})
	}
}
