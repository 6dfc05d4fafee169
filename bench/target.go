package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server"
)

// target is the server under load: in process, or a remote one (--addr).
type target struct {
	addr     string
	inProc   bool
	workers  int
	dialOpts []grpc.DialOption
	// timer times the in-process server's code_exec functions (nil when
	// it has none, or for a remote server).
	timer *submissionTimer
	// metrics is the in-process server's registry (nil for a remote one).
	metrics prometheus.Gatherer
	stop    func()
}

// requestBuckets returns the in-process server's
// rewardd_request_duration_seconds{method="Score"} histogram: the upper
// bounds of its buckets and their cumulative counts, or nil.
func (t *target) requestBuckets() (bounds []float64, counts []uint64) {
	if t.metrics == nil {
		return nil, nil
	}
	families, err := t.metrics.Gather()
	if err != nil {
		return nil, nil
	}
	for _, f := range families {
		if f.GetName() != "rewardd_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == "Score" {
					for _, b := range m.GetHistogram().GetBucket() {
						bounds = append(bounds, b.GetUpperBound())
						counts = append(counts, b.GetCumulativeCount())
					}
					return bounds, counts
				}
			}
		}
	}
	return nil, nil
}

// stopGrace bounds the in-process server's shutdown, which waits for
// requests still in progress: none when a run ends, but one a client gave
// up on may still be in the sandbox.
const stopGrace = 10 * time.Second

// startTarget starts the in-process server (server.New, as `rewardd serve`
// wires it, serving gRPC on loopback TCP), or names the remote one.
func startTarget(opts *Options) (*target, error) {
	if opts.Addr != "" {
		return &target{addr: opts.Addr, dialOpts: opts.DialOptions}, nil
	}
	cfg, timer := timeCodeFunctions(opts.Config)
	srv, err := server.New(server.Options{Config: cfg, Kinds: opts.Registry, Workers: opts.Workers, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	var wg conc.WaitGroup
	wg.Go(func() { srv.Serve(lis, nil) })
	return &target{
		addr: lis.Addr().String(), inProc: true, workers: opts.Workers, timer: timer, metrics: srv.Metrics(),
		dialOpts: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
		// Every request has been answered when the bench stops the
		// server: the grace period only lets its connections close.
		stop: func() {
			ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
			defer cancel()
			srv.Shutdown(ctx)
			wg.Wait()
		},
	}, nil
}

func (t *target) close() {
	if t.stop != nil {
		t.stop()
	}
}

// dial opens one client connection, as one trainer process would have.
func (t *target) dial(ctx context.Context) (*grpc.ClientConn, error) {
	opts := append([]grpc.DialOption{
		grpc.WithDefaultCallOptions(
			grpc.ForceCodecV2(preEncodedCodec{}),
			grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)),
	}, t.dialOpts...)
	conn, err := grpc.NewClient(t.addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", t.addr, err)
	}
	// Connect before the clock starts.
	if _, err := rewardv1.NewRewardServiceClient(conn).ListFunctions(ctx, &rewardv1.ListFunctionsRequest{}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ListFunctions on %s: %w", t.addr, err)
	}
	return conn, nil
}

// preEncoded is a ScoreRequest already in its wire format: the load
// generator encodes each distinct batch once, so that its own CPU goes to
// the calls, not to re-encoding the same message (a trainer encodes each
// batch once too, and pays for it on its own side).
type preEncoded []byte

// preEncodedCodec is gRPC's proto codec that also sends preEncoded bytes as
// they are.
type preEncodedCodec struct{}

func (preEncodedCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(preEncoded); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return encoding.GetCodecV2("proto").Marshal(v)
}

func (preEncodedCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return encoding.GetCodecV2("proto").Unmarshal(data, v)
}

func (preEncodedCodec) Name() string { return "proto" }

var _ encoding.CodecV2 = preEncodedCodec{}

// encode returns req in its wire format.
func encode(req *rewardv1.ScoreRequest) (preEncoded, error) {
	b, err := proto.Marshal(req)
	return preEncoded(b), err
}

// usage is what this process has consumed so far.
type usage struct {
	cpu     time.Duration // user + system
	mallocs uint64
	bytes   uint64
	gcs     uint32
	// idle and gc are the Go scheduler's CPU accounting (runtime/metrics):
	// the time its Ps had no goroutine to run, and the time the collector
	// took, in seconds.
	idle, gc float64
}

func readUsage() usage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	samples := []metrics.Sample{{Name: "/cpu/classes/idle:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(samples)
	u := usage{
		cpu:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		mallocs: ms.Mallocs, bytes: ms.TotalAlloc, gcs: ms.NumGC,
	}
	if samples[0].Value.Kind() == metrics.KindFloat64 {
		u.idle = samples[0].Value.Float64()
	}
	if samples[1].Value.Kind() == metrics.KindFloat64 {
		u.gc = samples[1].Value.Float64()
	}
	return u
}

// resetPeakRSS resets the process's peak resident set size (VmHWM), so that
// the peak read after a run is that run's. It reports false when the kernel
// does not allow it; VmHWM is then the peak since the process started.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns VmHWM in bytes.
func peakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// loadAvg returns the 1, 5 and 15 minute load averages, or nil.
func loadAvg() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}

// quiet is the logger of the in-process server when the caller gives none.
func quiet() *zap.Logger { return zap.NewNop() }
