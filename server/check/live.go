package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// defaultLiveTimeout bounds each call to the live server when
// Input.LiveTimeout is 0.
const defaultLiveTimeout = 30 * time.Second

// LiveReport is what the live server said.
type LiveReport struct {
	// Addr names the server.
	Addr string `json:"addr"`
	// Health is its health status for reward.v1.RewardService ("SERVING"),
	// empty when it did not answer.
	Health string `json:"health,omitempty"`
	// Fingerprint and Functions are what ListFunctions answered.
	Fingerprint string   `json:"fingerprint,omitempty"`
	Functions   []string `json:"functions,omitempty"`
	// RowsCompared is the number of sample rows scored on the server and
	// compared with the local scores; Mismatches counts, per function, the
	// rows where status or value differ.
	RowsCompared int            `json:"rows_compared"`
	Mismatches   map[string]int `json:"mismatches,omitempty"`
}

// checkLive compares the live server with the local config: health,
// functions, fingerprint, and (when local holds sample scores) the scores of
// the samples. Every problem is a failure; the checks that need an answer
// the server did not give are skipped.
func checkLive(ctx context.Context, r *Report, in Input, local *localScores, batch int) error {
	cfg := in.Service.Config()
	lr := &LiveReport{Addr: in.LiveAddr}
	r.Live = lr
	timeout := in.LiveTimeout
	if timeout <= 0 {
		timeout = defaultLiveTimeout
	}
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, timeout) }

	cctx, cancel := call()
	health, err := healthpb.NewHealthClient(in.Live).Check(cctx, &healthpb.HealthCheckRequest{Service: rewardv1.RewardService_ServiceDesc.ServiceName})
	cancel()
	if err != nil {
		return r.callFailed(ctx, CodeLiveHealth, "health check of %s: %v", in.LiveAddr, err)
	}
	lr.Health = health.GetStatus().String()
	if health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		r.add(Failure, CodeLiveHealth, "", "%s is %s, not SERVING", in.LiveAddr, lr.Health)
		return nil
	}

	client := rewardv1.NewRewardServiceClient(in.Live)
	cctx, cancel = call()
	list, err := client.ListFunctions(cctx, &rewardv1.ListFunctionsRequest{})
	cancel()
	if err != nil {
		return r.callFailed(ctx, CodeLiveFunctions, "ListFunctions on %s: %v", in.LiveAddr, err)
	}
	lr.Fingerprint = list.GetConfigFingerprint()
	for _, f := range list.GetFunctions() {
		lr.Functions = append(lr.Functions, f.GetName())
	}

	var common, missing []string
	for _, fn := range cfg.Functions {
		if slices.Contains(lr.Functions, fn.Name) {
			common = append(common, fn.Name)
		} else {
			missing = append(missing, fn.Name)
		}
	}
	var extra []string
	for _, name := range lr.Functions {
		if !slices.Contains(common, name) {
			extra = append(extra, name)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		r.add(Failure, CodeLiveFunctions, "", "%s serves other functions than %s: not served there: [%s]; served there only: [%s]",
			in.LiveAddr, in.ConfigName, strings.Join(missing, ", "), strings.Join(extra, ", "))
	}
	if lr.Fingerprint != cfg.Fingerprint {
		r.add(Failure, CodeLiveFingerprint, "", "%s serves config fingerprint %s, but %s has fingerprint %s: the server runs another config",
			in.LiveAddr, lr.Fingerprint, in.ConfigName, cfg.Fingerprint)
	}

	if local == nil || len(common) == 0 {
		return nil
	}
	return compareScores(ctx, r, in, local, common, client, call, batch)
}

// compareScores scores the sample rows on the server with the functions in
// common, batch rows per call, and requires the same status and value on
// every row as the local first pass.
func compareScores(ctx context.Context, r *Report, in Input, local *localScores, common []string,
	client rewardv1.RewardServiceClient, call func() (context.Context, context.CancelFunc), batch int) error {
	lr := r.Live
	n := len(local.rows)
	remote := make(map[string]*rewardv1.FunctionScores, len(common))
	for _, name := range common {
		remote[name] = &rewardv1.FunctionScores{Name: name, Errors: make(map[int32]string), Reasons: make(map[int32]string)}
	}
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		req := &rewardv1.ScoreRequest{Functions: common}
		for _, row := range local.rows[lo:hi] {
			req.Rollouts = append(req.Rollouts, row.Rollout)
		}
		cctx, cancel := call()
		resp, err := client.Score(cctx, req)
		cancel()
		if err == nil && len(resp.GetFunctions()) != len(common) {
			err = fmt.Errorf("answered %d functions for the %d asked", len(resp.GetFunctions()), len(common))
		}
		if err != nil {
			return r.callFailed(ctx, CodeLiveScores, "score %s rows %d to %d on %s: %v",
				in.SamplesName, local.rows[lo].Line, local.rows[hi-1].Line, in.LiveAddr, err)
		}
		for k, fs := range resp.GetFunctions() {
			got := remote[common[k]]
			if len(fs.GetValues()) != hi-lo || len(fs.GetStatus()) != hi-lo {
				r.add(Failure, CodeLiveScores, common[k], "%s answered %d values and %d statuses for %d rows",
					in.LiveAddr, len(fs.GetValues()), len(fs.GetStatus()), hi-lo)
				return nil
			}
			got.Values = append(got.Values, fs.GetValues()...)
			got.Status = append(got.Status, fs.GetStatus()...)
			for i, reason := range fs.GetErrors() {
				got.Errors[int32(lo)+i] = reason
			}
			for i, reason := range fs.GetReasons() {
				got.Reasons[int32(lo)+i] = reason
			}
		}
	}
	lr.RowsCompared = n
	lr.Mismatches = make(map[string]int)
	for _, name := range common {
		mine, theirs := local.byName[name], remote[name]
		diff := mismatches(mine, theirs)
		lr.Mismatches[name] = len(diff)
		if len(diff) > 0 {
			i := diff[0]
			r.add(Failure, CodeLiveScores, name, "%s scores %d of %d rows differently; first: %s: here %s, there %s",
				in.LiveAddr, len(diff), n, where(in, i), outcome(mine, i), outcome(theirs, i))
		}
	}
	return nil
}

// callFailed records a call to the live server that failed as a failure
// under code, which ends the live check, and returns nil; when ctx ended,
// which is why the call failed, it records nothing and returns ctx's error.
func (r *Report) callFailed(ctx context.Context, code Code, format string, args ...any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.add(Failure, code, "", format, args...)
	return nil
}
