package check_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rewardd/rewardd/internal/servertest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/check"
)

// liveServer serves configYAML on loopback and returns a client connection
// to its gRPC port and its health server.
func liveServer(t *testing.T, configYAML string) (*grpc.ClientConn, *health.Server) {
	t.Helper()
	srv := servertest.Start(t, server.Options{Config: newService(t, configYAML, builtin.Registry()).Config()})
	return srv.Dial(t), srv.Health()
}

func runLive(t *testing.T, localYAML string, conn grpc.ClientConnInterface, samples string) *check.Report {
	t.Helper()
	in := check.Input{ConfigName: "local.yml", Service: newService(t, localYAML, builtin.Registry()),
		Live: conn, LiveAddr: "bufnet", LiveTimeout: 10 * time.Second, BatchSize: 3}
	if samples != "" {
		in.SamplesName = "samples.jsonl"
		in.Rows, _ = readRows(t, samples)
	}
	r := mustRun(t, in)
	t.Logf("report:\n%s", table(r))
	return r
}

func TestLiveSameConfig(t *testing.T) {
	conn, _ := liveServer(t, statsConfig)
	r := runLive(t, statsConfig, conn, statsSamples)
	l := r.Live
	if l.Health != "SERVING" || l.Fingerprint != r.Fingerprint || strings.Join(l.Functions, ",") != "accuracy,tagged" {
		t.Errorf("live: %+v", l)
	}
	if l.RowsCompared != 9 || l.Mismatches["accuracy"] != 0 || l.Mismatches["tagged"] != 0 {
		t.Errorf("live comparison: %d rows, mismatches %v", l.RowsCompared, l.Mismatches)
	}
	// Only the samples' own findings: the server agrees on every score,
	// ERROR rows included.
	assertFindings(t, r,
		finding{check.Failure, check.CodeErrors, "accuracy"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
	)
}

// TestLiveOtherConfig: the server compares accuracy on the whole completion,
// not on its <answer> tag.
// The fingerprints differ (the failure names both) and so do the scores.
func TestLiveOtherConfig(t *testing.T) {
	other := strings.Replace(statsConfig, "extract: [answer_tag]", "extract: [none]", 1)
	conn, _ := liveServer(t, other)
	r := runLive(t, statsConfig, conn, statsSamples)
	if r.Live.Fingerprint == r.Fingerprint || r.Live.Fingerprint == "" {
		t.Fatalf("fingerprints %q (live) and %q (local)", r.Live.Fingerprint, r.Fingerprint)
	}
	assertFindings(t, r,
		finding{check.Failure, check.CodeErrors, "accuracy"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
		finding{check.Failure, check.CodeLiveFingerprint, ""},
		finding{check.Failure, check.CodeLiveScores, "accuracy"},
	)
	for _, f := range r.Findings {
		if f.Code == check.CodeLiveFingerprint && !(strings.Contains(f.Message, r.Fingerprint) && strings.Contains(f.Message, r.Live.Fingerprint)) {
			t.Errorf("the fingerprint failure does not name both fingerprints: %s", f.Message)
		}
	}
	// The four right answers in tags are wrong as whole completions; the
	// wrong ones, N/A and ERROR rows stay as they were.
	if m := r.Live.Mismatches; m["tagged"] != 0 || m["accuracy"] != 4 {
		t.Errorf("mismatches %v, want accuracy 4, tagged 0", m)
	}
}

func TestLiveOtherFunctions(t *testing.T) {
	conn, _ := liveServer(t, statsConfig+"  - {name: extra, kind: format}\n")
	local := strings.Replace(statsConfig, "name: tagged", "name: tags", 1)
	r := runLive(t, local, conn, "")
	assertFindings(t, r,
		finding{check.Failure, check.CodeLiveFunctions, ""},
		finding{check.Failure, check.CodeLiveFingerprint, ""},
	)
	if r.Live.RowsCompared != 0 {
		t.Errorf("%d rows compared without samples", r.Live.RowsCompared)
	}
}

func TestLiveNotServing(t *testing.T) {
	conn, hs := liveServer(t, statsConfig)
	hs.SetServingStatus(rewardv1.RewardService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	r := runLive(t, statsConfig, conn, "")
	if r.Live.Health != "NOT_SERVING" {
		t.Errorf("health %q", r.Live.Health)
	}
	assertFindings(t, r, finding{check.Failure, check.CodeLiveHealth, ""})
}

func TestLiveUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := runLive(t, statsConfig, conn, statsSamples)
	if r.Live.Health != "" {
		t.Errorf("health %q from nobody", r.Live.Health)
	}
	assertFindings(t, r,
		finding{check.Failure, check.CodeErrors, "accuracy"},
		finding{check.Warning, check.CodeZeroVariance, "tagged"},
		finding{check.Failure, check.CodeLiveHealth, ""},
	)
}
