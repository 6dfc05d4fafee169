package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rewardd/rewardd/scorers/codeexec"
)

// How POST /run_code answers a request it cannot answer in time.
//
// SandboxFusion's clients give up on a request after a wait of their own
// and retry only some answers. verl waits compile_timeout + run_timeout +
// 10 s (its API_TIMEOUT) and retries a 504 Gateway Timeout, three attempts
// in all, 1 s and then 2 s apart; anything else that is not a 2xx, its own
// timeout included, it scores -1 (a sandbox error) for the test.
// SandboxFusion's SDK retries every answer but a 200. So /run_code answers
// every request within what its client waits, less runCodeMargin: with
// what the program did when its run finished by then; else with a 504,
// the run going on (codeexec.Executor), so that the client's retry, the
// same request, waits for that run where it stood in the queue instead of
// queueing again at the back. A request it does not admit at all
// (limits.max_inflight_requests, the memory budget) is refused at once
// with a 504 too, with Retry-After, rather than the 429 of the other
// endpoints, which verl would score -1.
const (
	// sandboxFusionSlack is what verl waits beyond compile_timeout and
	// run_timeout.
	sandboxFusionSlack = 10 * time.Second
	// sandboxFusionTimeout is SandboxFusion's compile_timeout and
	// run_timeout when a request has none.
	sandboxFusionTimeout = 10 * time.Second
	// runCodeMargin is how long before its client's wait ends a request
	// is answered.
	runCodeMargin = 2 * time.Second
)

// runCodeWait is how long /run_code works on in before it answers 504:
// what a SandboxFusion client waits for it, less runCodeMargin, at most
// limit (limits.request_timeout).
func runCodeWait(in *runCodeRequest, limit time.Duration) time.Duration {
	timeout := func(v *float64) time.Duration {
		switch {
		case v == nil || !(*v > 0): // absent, or no number of seconds
			return sandboxFusionTimeout
		case *v >= limit.Seconds():
			return limit
		}
		return time.Duration(*v * float64(time.Second))
	}
	return min(limit, timeout(in.CompileTimeout)+timeout(in.RunTimeout)+sandboxFusionSlack-runCodeMargin)
}

// runCodeLate is the error of a request whose context ended before its
// run did (err, the context's error): the client's cancellation as it is;
// its wait, a 504 that says the run goes on.
func runCodeLate(err error, wait time.Duration) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return status.Errorf(codes.DeadlineExceeded,
		"the run did not finish within %v, what a SandboxFusion client waits (compile_timeout + run_timeout + %v) less %v, or limits.request_timeout: it goes on, and the same request sent again within %v waits for it",
		wait, sandboxFusionSlack, runCodeMargin, codeexec.RunGrace)
}

// retryableOverload answers /run_code's refusals for overload
// (RESOURCE_EXHAUSTED, 429 elsewhere) with 504 Gateway Timeout and
// Retry-After: 1, the answer SandboxFusion's clients retry (see above).
func retryableOverload(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h(overloadWriter{w}, r) }
}

type overloadWriter struct{ http.ResponseWriter }

func (w overloadWriter) WriteHeader(code int) {
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		code = http.StatusGatewayTimeout
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the connection's writer.
func (w overloadWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
