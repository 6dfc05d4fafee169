package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
)

// Attacks: what Overload runs against a server next to the valid clients.
// Each reproduces a finding of the reliability review as a load.
const (
	// AttackUnauth: connections opening Score and ScoreStream calls without
	// the token, HEADERS only, never a message (Attackers connections, 64
	// calls open on each).
	AttackUnauth = "unauth"
	// AttackMemory: Attackers clients (64) each sending 2,048-rollout ×
	// 16 KiB requests (32 MiB) one after the other.
	AttackMemory = "memory"
	// AttackStreams: Attackers ScoreStream clients (16) sending 2,048 ×
	// 16 KiB batches and never reading an answer.
	AttackStreams = "streams"
	// AttackLarge: one client sending a 250 MB request (15,000 rollouts ×
	// 16,667 bytes), again when answered.
	AttackLarge = "large"
	// AttackSlow: Attackers HTTP clients (512) each sending a 1 MiB body a
	// byte every 2 s.
	AttackSlow = "slow"
	// AttackIdle: Attackers connections (8,000) to each port, opened and
	// left idle: HTTP after one GET /healthz, gRPC after the HTTP/2
	// handshake.
	AttackIdle = "idle"
	// AttackSimilarity: one request of 64 rollouts scored by an inline
	// similarity function (fuzzy, max_chars 200,000) on 200,000-character
	// texts, about a second of CPU each, again when answered.
	AttackSimilarity = "similarity"
)

// Attacks lists the attacks.
func Attacks() []string {
	return []string{AttackUnauth, AttackMemory, AttackStreams, AttackLarge, AttackSlow, AttackIdle, AttackSimilarity}
}

// OverloadOptions configure Overload. A zero field takes its default
// (OverloadDefaults, and the attack's own sizes).
type OverloadOptions struct {
	// Attack is one of Attacks().
	Attack string
	// Addr and HTTPAddr are the gRPC and HTTP addresses of the running
	// rewardd under load; ServerPID is its process id, for its CPU, peak
	// RSS and descriptors from /proc (0: not measured).
	Addr, HTTPAddr string
	ServerPID      int
	// DialOptions are the valid gRPC clients' (TLS, the token); AuthToken
	// is the valid HTTP clients' bearer token ("" for none). The attackers
	// never send the token to a server that wants one, except the memory,
	// large and similarity ones, which are clients with the token (their
	// requests are valid, only heavy).
	DialOptions []grpc.DialOption
	AuthToken   string
	// Data is GSM8K's test.jsonl, the rows of the valid requests.
	Data string
	// Clients valid gRPC clients send BatchSize-rollout requests, each the
	// moment its last is answered. HTTPClients valid HTTP clients do the
	// same on POST /v1/score with HTTPBatchSize rollouts (the slow and idle
	// attacks; 0 elsewhere), and a prober opens a new gRPC and a new HTTP
	// connection for one HTTPBatchSize request every ProbeEvery. The
	// defaults (4 of each) keep a one-worker server's core busy at
	// capacity, so that the capacity phase measures the server and not the
	// clients' round trips.
	Clients, BatchSize          int
	HTTPClients, HTTPBatchSize  int
	ProbeEvery                  time.Duration
	Capacity, Duration, Recover time.Duration
	// Attackers sizes the attack (see each attack).
	Attackers int
	// Sizes of the attack's requests: rollouts per request and bytes per
	// completion (the memory, streams and large attacks), and characters per
	// text (similarity); zero takes the attack's.
	AttackRollouts, AttackBytes int
	// MemoryBudget is the server's limits.memory_budget in bytes, which its
	// peak RSS must stay under (0: not checked).
	MemoryBudget int64
	// AttackerCommand, when set, runs the attack instead of this process:
	// the same attack options given to a process that calls ServeAttacker
	// (`rewardd-bench --attack … --attacker-only`), started before the
	// first phase. Started at a lower priority (nice), the attacker then
	// takes only the CPU the valid clients leave, so that their figures
	// measure the server, not the load generator's core.
	AttackerCommand *exec.Cmd
	// Progress receives a line per phase; nil for none.
	Progress io.Writer
}

// OverloadDefaults are the options a zero OverloadOptions field takes.
func OverloadDefaults() OverloadOptions {
	return OverloadOptions{
		Data: Defaults().Data, Clients: 4, BatchSize: 1024, HTTPBatchSize: 64, ProbeEvery: 250 * time.Millisecond,
		Capacity: 5 * time.Second, Duration: 30 * time.Second, Recover: 5 * time.Second,
	}
}

// attackDefaults are each attack's Attackers, AttackRollouts and
// AttackBytes, and whether its valid load has HTTP clients.
var attackDefaults = map[string]struct {
	attackers, rollouts, bytes int
	http                       bool
}{
	AttackUnauth:     {attackers: 16},
	AttackMemory:     {attackers: 64, rollouts: 2048, bytes: 16 << 10},
	AttackStreams:    {attackers: 16, rollouts: 2048, bytes: 16 << 10},
	AttackLarge:      {attackers: 1, rollouts: 15000, bytes: 16667},
	AttackSlow:       {attackers: 512, http: true},
	AttackIdle:       {attackers: 8000, http: true},
	AttackSimilarity: {attackers: 1, rollouts: 64, bytes: 200000},
}

func (o *OverloadOptions) fill() error {
	d, ok := attackDefaults[o.Attack]
	if !ok {
		return &OptionError{fmt.Errorf("unknown attack %q (one of %s)", o.Attack, strings.Join(Attacks(), ", "))}
	}
	if o.Addr == "" || o.HTTPAddr == "" {
		return &OptionError{errors.New("an overload run needs the server's gRPC and HTTP addresses")}
	}
	def := OverloadDefaults()
	if o.Data == "" {
		o.Data = def.Data
	}
	for _, p := range []struct {
		v   *int
		def int
	}{
		{&o.Clients, def.Clients}, {&o.BatchSize, def.BatchSize}, {&o.HTTPBatchSize, def.HTTPBatchSize},
		{&o.Attackers, d.attackers}, {&o.AttackRollouts, d.rollouts}, {&o.AttackBytes, d.bytes},
	} {
		switch {
		case *p.v < 0:
			return &OptionError{errors.New("clients, attackers and sizes must not be negative")}
		case *p.v == 0:
			*p.v = p.def
		}
	}
	if o.HTTPClients == 0 && d.http {
		o.HTTPClients = 4
	}
	for _, p := range []struct{ v, def *time.Duration }{
		{&o.ProbeEvery, &def.ProbeEvery}, {&o.Capacity, &def.Capacity}, {&o.Duration, &def.Duration}, {&o.Recover, &def.Recover},
	} {
		switch {
		case *p.v < 0:
			return &OptionError{errors.New("durations must not be negative")}
		case *p.v == 0:
			*p.v = *p.def
		}
	}
	return nil
}

// OverloadResult is the report of an overload run: three phases, the valid
// clients alone (capacity), with the attack, and alone again (recovery),
// and whether the server met the bar.
type OverloadResult struct {
	Attack  string `json:"attack"`
	Target  string `json:"target"`
	Machine struct {
		CPUs       int       `json:"cpus"`
		GOMAXPROCS int       `json:"gomaxprocs"`
		Time       time.Time `json:"time"`
	} `json:"machine"`
	// Settings are the options of the run, defaults filled in.
	Settings OverloadSettings `json:"settings"`
	Phases   []*Phase         `json:"phases"`
	// Verdict is the bar, item by item.
	Verdict []Check `json:"verdict"`
}

// OverloadSettings echo the options of an overload run.
type OverloadSettings struct {
	Clients         int     `json:"clients"`
	BatchSize       int     `json:"batch_size"`
	HTTPClients     int     `json:"http_clients,omitempty"`
	HTTPBatchSize   int     `json:"http_batch_size,omitempty"`
	Attackers       int     `json:"attackers"`
	AttackRollouts  int     `json:"attack_rollouts,omitempty"`
	AttackBytes     int     `json:"attack_bytes,omitempty"`
	CapacitySeconds float64 `json:"capacity_seconds"`
	AttackSeconds   float64 `json:"attack_seconds"`
	RecoverSeconds  float64 `json:"recover_seconds"`
	MemoryBudget    int64   `json:"memory_budget_bytes,omitempty"`
	// AttackerProcess says the attack ran in a process of its own.
	AttackerProcess bool `json:"attacker_process,omitempty"`
}

// Phase is what one phase measured.
type Phase struct {
	Name       string    `json:"name"`
	Seconds    float64   `json:"seconds"`
	LoadBefore []float64 `json:"load_average_before"`
	// Valid is the valid gRPC clients' load; HTTP the valid HTTP clients'
	// (nil without them).
	Valid *ClientLoad `json:"valid"`
	HTTP  *ClientLoad `json:"http,omitempty"`
	// Probes count the requests on new connections, by outcome: "grpc"
	// and "http" (with HTTP clients only).
	Probes map[string]Requests `json:"probes,omitempty"`
	// Attacker is what the attack got (the attack phase only).
	Attacker *AttackerResult `json:"attacker,omitempty"`
	// RampSeconds is how long the attack took to be in place before the
	// valid clients' clock started (the attack phase only).
	RampSeconds float64       `json:"ramp_seconds,omitempty"`
	Server      ServerFigures `json:"server"`
	// ClientCPUSeconds is this process's CPU in the phase (the valid
	// clients, and the attacker unless it runs in a process of its own):
	// near the phase's length, the load generator's core was the limit, not
	// the server.
	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	// Steal is the CPU time the hypervisor took in the phase; nil where
	// /proc/stat cannot be read.
	Steal *Steal `json:"steal,omitempty"`
}

// ClientLoad is one kind of valid client's load over a phase.
type ClientLoad struct {
	Requests          Requests `json:"requests"`
	Rollouts          int64    `json:"rollouts"`
	RolloutsPerSecond float64  `json:"rollouts_per_second"`
	Latency           Latency  `json:"latency_ms"`
	FirstBad          string   `json:"first_bad,omitempty"`
}

// AttackerResult is what an attack did and got.
type AttackerResult struct {
	// What describes the attack as run.
	What string `json:"what"`
	// Sent counts the calls, requests, streams or connections the attack
	// made, Outcomes how each ended: a gRPC code name, "HTTP 408",
	// "closed on arrival", "open when the phase ended", ….
	Sent     int            `json:"sent"`
	Outcomes map[string]int `json:"outcomes"`
	// Latency is the time from sending to the outcome, of those that had
	// one before the phase ended.
	Latency *Latency `json:"latency_ms,omitempty"`
	// Allowed are the outcomes the bar accepts for this attack.
	Allowed []string `json:"allowed"`
	Notes   []string `json:"notes,omitempty"`
}

// Check is one item of the bar.
type Check struct {
	What string `json:"what"`
	OK   bool   `json:"ok"`
}

// noisyShare is the steal, in a phase on the server's or the load
// generator's CPUs, above which a share check says the machine was not
// quiet.
const noisyShare = 0.05

// minShare is the share of the capacity phase's throughput the valid
// clients must keep while the attack runs.
const minShare = 0.8

// Overload runs an attack against a running server next to valid clients,
// in three phases (capacity, attack, recovery), and checks the bar: the
// server's peak RSS under its memory budget, the valid clients keeping
// minShare of their capacity, the attacker getting only the outcomes its
// attack allows.
func Overload(ctx context.Context, opts OverloadOptions) (*OverloadResult, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	ld, err := newOverloadLoad(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer ld.close()
	var att attacker
	if opts.AttackerCommand != nil {
		att, err = newProcessAttacker(opts.AttackerCommand)
	} else {
		att, err = newAttacker(ctx, &opts)
	}
	if err != nil {
		return nil, err
	}
	defer att.close()

	res := &OverloadResult{Attack: opts.Attack, Target: opts.Addr}
	res.Machine.CPUs, res.Machine.GOMAXPROCS, res.Machine.Time = runtime.NumCPU(), runtime.GOMAXPROCS(0), time.Now().UTC().Truncate(time.Second)
	res.Settings = OverloadSettings{
		Clients: opts.Clients, BatchSize: opts.BatchSize, HTTPClients: opts.HTTPClients, Attackers: opts.Attackers,
		CapacitySeconds: opts.Capacity.Seconds(), AttackSeconds: opts.Duration.Seconds(), RecoverSeconds: opts.Recover.Seconds(),
		MemoryBudget: opts.MemoryBudget, AttackerProcess: opts.AttackerCommand != nil,
	}
	if opts.HTTPClients > 0 {
		res.Settings.HTTPBatchSize = opts.HTTPBatchSize
	}
	if d := attackDefaults[opts.Attack]; d.rollouts > 0 {
		res.Settings.AttackRollouts, res.Settings.AttackBytes = opts.AttackRollouts, opts.AttackBytes
	}
	watch := newServerWatch(opts.ServerPID, opts.HTTPAddr)
	defer watch.close()
	steal := newStealClock(opts.ServerPID)
	for _, ph := range []struct {
		name   string
		d      time.Duration
		attack bool
	}{{"capacity", opts.Capacity, false}, {"attack", opts.Duration, true}, {"recovery", opts.Recover, false}} {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "== %s: %v\n", ph.name, ph.d)
		}
		p := &Phase{Name: ph.name, LoadBefore: loadAvg()}
		cpu0 := readUsage().cpu
		steal.begin()
		pw := watch.begin(ctx)
		var wg conc.WaitGroup
		var attackDone func() *AttackerResult
		if ph.attack {
			actx, stop := context.WithCancel(ctx)
			ready := make(chan struct{})
			var ar *AttackerResult
			wg.Go(func() { ar = att.run(actx, ready) })
			attackDone = func() *AttackerResult {
				stop()
				wg.Wait()
				return ar
			}
			start := time.Now()
			select {
			case <-ready:
			case <-time.After(rampLimit):
			case <-ctx.Done():
			}
			p.RampSeconds = time.Since(start).Seconds()
		}
		ld.run(ctx, ph.d, p)
		if attackDone != nil {
			p.Attacker = attackDone()
		}
		p.Server = pw.end(ctx)
		p.Steal = steal.end()
		p.ClientCPUSeconds = (readUsage().cpu - cpu0).Seconds()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res.Phases = append(res.Phases, p)
	}
	res.Verdict = verdict(res, &opts)
	return res, nil
}

// rampLimit bounds the wait for an attack to be in place.
const rampLimit = 30 * time.Second

// Passed reports whether every check of the bar passed.
func (r *OverloadResult) Passed() bool {
	return !slices.ContainsFunc(r.Verdict, func(c Check) bool { return !c.OK })
}

// verdict checks the bar.
func verdict(r *OverloadResult, opts *OverloadOptions) []Check {
	var checks []Check
	if opts.MemoryBudget > 0 && opts.ServerPID != 0 {
		var peak int64
		for _, p := range r.Phases {
			peak = max(peak, p.Server.PeakRSSBytes)
		}
		checks = append(checks, Check{fmt.Sprintf("server peak RSS %s under the memory budget %s", bytesOf(float64(peak)), bytesOf(float64(opts.MemoryBudget))), peak < opts.MemoryBudget})
	}
	capacity, attack := r.Phases[0], r.Phases[1]
	// The share is of throughput, as the valid clients saw it. The steal
	// beside it says how much of either phase the hypervisor took: a share
	// measured while it took a lot (noisyShare) says more of the machine
	// than of the server, and the check says so.
	share := func(name string, c, a *ClientLoad) {
		if c == nil || a == nil {
			return
		}
		s := ratio(a.RolloutsPerSecond, c.RolloutsPerSecond)
		what := fmt.Sprintf("valid %s clients under attack: %s rollouts/s, %.0f%% of the %s at capacity (want ≥ %.0f%%)", name, num(a.RolloutsPerSecond), 100*s, num(c.RolloutsPerSecond), 100*minShare)
		if capacity.Steal != nil && attack.Steal != nil {
			most := max(capacity.Steal.Server, capacity.Steal.LoadGenerator, attack.Steal.Server, attack.Steal.LoadGenerator)
			what += fmt.Sprintf("; steal on the server's, load generator's CPUs %.0f%%, %.0f%% at capacity, %.0f%%, %.0f%% under attack",
				100*capacity.Steal.Server, 100*capacity.Steal.LoadGenerator, 100*attack.Steal.Server, 100*attack.Steal.LoadGenerator)
			if most > noisyShare {
				what += " (the machine was not quiet)"
			}
		}
		checks = append(checks, Check{what, s >= minShare})
	}
	share("gRPC", capacity.Valid, attack.Valid)
	share("HTTP", capacity.HTTP, attack.HTTP)
	for _, kind := range []string{"grpc", "http"} {
		if p, ok := attack.Probes[kind]; ok {
			checks = append(checks, Check{fmt.Sprintf("new %s connections under attack: %d of %d requests OK", kind, p.OK, p.Sent), p.Sent > 0 && p.OK == p.Sent})
		}
	}
	if a := attack.Attacker; a != nil {
		var other []string
		for how, n := range a.Outcomes {
			if !slices.Contains(a.Allowed, how) {
				other = append(other, fmt.Sprintf("%s %d", how, n))
			}
		}
		slices.Sort(other)
		what := "the attacker got only " + strings.Join(a.Allowed, ", ")
		if len(other) > 0 {
			what += "; also: " + strings.Join(other, ", ")
		}
		checks = append(checks, Check{what, len(other) == 0})
	}
	return checks
}
