package server_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/server"
)

// TestAuth tries a missing, a wrong and the right token on every scoring
// surface, and checks that health and metrics stay open.
func TestAuth(t *testing.T) {
	st := newStackAuth(t, testConfig, server.NewAuth("s3cret\n"))
	tokens := map[string]string{"missing": "", "wrong": "Bearer nope", "no scheme": "s3cret", "right": "Bearer s3cret"}
	req := &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{{Completion: "<answer>1</answer>", Fields: answerField("1")}}}

	for name, header := range tokens {
		want := codes.Unauthenticated
		if name == "right" {
			want = codes.OK
		}
		ctx := context.Background()
		if header != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", header)
		}
		grpcCalls := map[string]func() error{
			"Score": func() error { _, err := st.client.Score(ctx, req); return err },
			"ListFunctions": func() error {
				_, err := st.client.ListFunctions(ctx, &rewardv1.ListFunctionsRequest{})
				return err
			},
			"ScoreStream": func() error {
				s, err := st.client.ScoreStream(ctx)
				if err != nil {
					return err
				}
				// A refused stream may fail Send with io.EOF; the status
				// is then in Recv, as grpc-go documents.
				s.Send(req)
				_, err = s.Recv()
				s.CloseSend()
				return err
			},
		}
		for method, call := range grpcCalls {
			if got := status.Code(call()); got != want {
				t.Errorf("gRPC %s with %s token: %v, want %v", method, name, got, want)
			}
		}

		wantHTTP := http.StatusUnauthorized
		if name == "right" {
			wantHTTP = http.StatusOK
		}
		for path, body := range map[string]string{
			"/v1/score":     `{"rollouts": [{"completion": "1"}]}`,
			"/get_reward":   `{"query": ["1"]}`,
			"/verify":       `{"response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": "1"}]}]}}`,
			"/seed_session": `{}`,
		} {
			r, _ := http.NewRequest(http.MethodPost, st.httpURL+path, bytes.NewReader([]byte(body)))
			if header != "" {
				r.Header.Set("Authorization", header)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != wantHTTP {
				t.Errorf("HTTP %s with %s token: %d, want %d", path, name, resp.StatusCode, wantHTTP)
			}
		}
	}

	// Probes and scrapers need no token.
	if h, err := healthpb.NewHealthClient(st.conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v %v", h, err)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := get(t, st.httpURL+path); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d", path, code)
		}
	}
}
