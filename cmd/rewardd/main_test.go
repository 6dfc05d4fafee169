package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/clitest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/rematch"
	"github.com/rewardd/rewardd/server/config"
)

// binary is the rewardd executable built once for these tests: they run the
// real program, as a user would.
var binary string

func TestMain(m *testing.M) { clitest.Main(m, "rewardd", &binary) }

// process is a running `rewardd serve` process.
type process struct {
	cmd       *exec.Cmd
	grpcAddr  string
	httpAddr  string
	logs      bytes.Buffer
	logsMu    sync.Mutex
	drained   chan struct{}
	exitState *os.ProcessState
}

// writeConfig writes the config text to a file of its own in the test's
// temporary directory and returns the file's path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rewards.yml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServer runs `rewardd serve` on free loopback ports and waits until it
// logs that it serves.
func startServer(t *testing.T, args ...string) *process {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

// startServerEnv is startServer with env (NAME=VALUE) added to the
// server's environment.
func startServerEnv(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	s := &process{drained: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		defer close(s.drained)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			s.logsMu.Lock()
			s.logs.Write(sc.Bytes())
			s.logs.WriteByte('\n')
			s.logsMu.Unlock()
			var line struct {
				Msg      string `json:"msg"`
				GRPCAddr string `json:"grpc_addr"`
				HTTPAddr string `json:"http_addr"`
			}
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				s.grpcAddr, s.httpAddr = line.GRPCAddr, line.HTTPAddr
				ready <- nil
				sent = true
			}
		}
		if !sent {
			ready <- errors.New("rewardd exited before serving")
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			s.cmd.Wait()
			t.Fatalf("%v; logs:\n%s", err, s.logText())
		}
	// A bound on a hang, not a timing: the sandbox's start compiles and
	// runs a probe in every language installed (sixteen besides python
	// with CODE_EXEC_LANGUAGES=all, Scala's compiler alone seconds of CPU),
	// which took over a minute under -race at load average 20.
	case <-time.After(5 * time.Minute):
		s.cmd.Process.Kill()
		t.Fatalf("rewardd did not log 'serving' within five minutes; logs:\n%s", s.logText())
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *process) logText() string {
	s.logsMu.Lock()
	defer s.logsMu.Unlock()
	return s.logs.String()
}

// stop sends SIGTERM and waits for a clean exit.
func (s *process) stop(t *testing.T) {
	if s.exitState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.drained
	err := s.cmd.Wait()
	s.exitState = s.cmd.ProcessState
	if err != nil {
		t.Errorf("rewardd serve after SIGTERM: %v; logs:\n%s", err, s.logText())
	}
}

func (s *process) client(t *testing.T) rewardv1.RewardServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return rewardv1.NewRewardServiceClient(conn)
}

// runRewardd runs a rewardd command to completion.
func runRewardd(t *testing.T, stdin string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return clitest.Run(t, binary, stdin, args...)
}

// gsm8kRows returns JSONL rows built from the first n GSM8K gold solutions
// in the embedded default config's shape (reference in "answer"); every
// third has its final number changed.
func gsm8kRows(t *testing.T, n int) []map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../../shared/data/gsm8k_test.jsonl")
	if err != nil {
		t.Skipf("GSM8K data not found (CI has ../shared beside the repo): %v", err)
	}
	var rows []map[string]any
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n"))[:n] {
		var r struct{ Question, Answer string }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		completion := r.Answer
		if i%3 == 2 {
			completion = strings.Replace(completion, "#### ", "#### 1", 1)
		}
		rows = append(rows, map[string]any{
			"id": fmt.Sprintf("gsm8k-%d", i), "prompt": r.Question, "completion": completion, "answer": r.Answer,
		})
	}
	return rows
}

func toRollout(row map[string]any) *rewardv1.Rollout {
	fields := map[string]*structpb.Value{}
	for k, v := range row {
		if k != "id" && k != "prompt" && k != "completion" {
			fields[k], _ = structpb.NewValue(v)
		}
	}
	return &rewardv1.Rollout{Id: row["id"].(string), Prompt: row["prompt"].(string), Completion: row["completion"].(string),
		Fields: &structpb.Struct{Fields: fields}}
}

// withBadLines returns rows as a Score request and as JSONL with two
// malformed lines among them (badLines holds their numbers: an
// unterminated string and invalid UTF-8).
func withBadLines(rows []map[string]any) (req *rewardv1.ScoreRequest, jsonl []byte, badLines map[int]bool) {
	req = &rewardv1.ScoreRequest{}
	var in bytes.Buffer
	badLines = map[int]bool{}
	for i, row := range rows {
		req.Rollouts = append(req.Rollouts, toRollout(row))
		line, _ := json.Marshal(row)
		in.Write(line)
		in.WriteByte('\n')
		if i == 10 {
			in.WriteString("{\"completion\": \"unterminated\n") // line 12
			badLines[12] = true
		}
		if i == 20 {
			in.WriteString("{\"completion\": \"bad \xff utf-8\"}\n") // line 23
			badLines[23] = true
		}
	}
	return req, in.Bytes(), badLines
}

// TestScoreMatchesServe scores the same rows with `rewardd score` and with a
// running `rewardd serve`, and checks the numbers are equal; malformed lines
// are reported by number and the others still scored.
func TestScoreMatchesServe(t *testing.T) {
	rows := gsm8kRows(t, 300)
	srv := startServer(t)
	req, in, badLines := withBadLines(rows)
	resp, err := srv.client(t).Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "scores.jsonl")
	if err := os.WriteFile(inPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, exit := runRewardd(t, "", "score", "--in", inPath, "--out", outPath)
	if exit != 1 {
		t.Errorf("exit %d with malformed lines, want 1; stderr:\n%s", exit, stderr)
	}
	for line := range badLines {
		if !strings.Contains(stderr, fmt.Sprintf("%s:%d:", inPath, line)) {
			t.Errorf("stderr does not name line %d:\n%s", line, stderr)
		}
	}

	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	outLines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(outLines) != len(rows)+len(badLines) {
		t.Fatalf("%d output rows for %d input lines", len(outLines), len(rows)+len(badLines))
	}
	byName := map[string]*rewardv1.FunctionScores{}
	for _, fs := range resp.GetFunctions() {
		byName[fs.GetName()] = fs
	}
	i := 0
	right := 0
	for n, line := range outLines {
		var o struct {
			ID     string              `json:"id"`
			Line   int                 `json:"line"`
			Scores map[string]*float64 `json:"scores"`
			Error  string              `json:"error"`
		}
		if err := json.Unmarshal(line, &o); err != nil {
			t.Fatalf("output line %d: %v", n+1, err)
		}
		if badLines[n+1] {
			if o.Line != n+1 || o.Error == "" {
				t.Errorf("output line %d: %s, want the malformed line's number and error", n+1, line)
			}
			continue
		}
		if o.ID != rows[i]["id"] {
			t.Fatalf("output line %d has id %q, want %q", n+1, o.ID, rows[i]["id"])
		}
		for name, fs := range byName {
			got, want := o.Scores[name], fs.GetValues()[i]
			if got == nil && !math.IsNaN(want) || got != nil && *got != want {
				t.Errorf("row %d %s: score says %v, serve says %v", i, name, got, want)
			}
		}
		if v := o.Scores["accuracy"]; v != nil && *v == 1 {
			right++
		}
		i++
	}
	if right != 200 {
		t.Errorf("%d rows scored accuracy 1, want the 200 unchanged gold solutions", right)
	}
}

// TestServeAnswersGrpcurlAndCurl drives a running server with the commands
// the README shows.
func TestServeAnswersGrpcurlAndCurl(t *testing.T) {
	srv := startServer(t)
	body := `{"rollouts":[{"completion":"<think>7*6</think><answer>42</answer>","fields":{"answer":"42"}},` +
		`{"completion":"<answer>41</answer>","fields":{"answer":"42"}}]}`
	want := map[string][]float64{"accuracy": {1, 0}, "format": {1, 0}}
	check := func(tool string, out []byte) {
		var resp rewardv1.ScoreResponse
		if err := protojson.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s output: %v\n%s", tool, err, out)
		}
		for _, fs := range resp.GetFunctions() {
			if w, ok := want[fs.GetName()]; ok && fmt.Sprint(fs.GetValues()) != fmt.Sprint(w) {
				t.Errorf("%s: %s = %v, want %v", tool, fs.GetName(), fs.GetValues(), w)
			}
		}
		if len(resp.GetFunctions()) < 2 {
			t.Errorf("%s: %d functions in the answer", tool, len(resp.GetFunctions()))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if curl, err := exec.LookPath("curl"); err != nil {
		t.Errorf("curl is not installed (make deps installs it): %v", err)
	} else {
		out, err := exec.CommandContext(ctx, curl, "-sS", "--fail-with-body", "-X", "POST", "http://"+srv.httpAddr+"/v1/score",
			"-H", "Content-Type: application/json", "-d", body).Output()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		check("curl", out)
	}
	grpcurl, err := exec.LookPath("grpcurl")
	if err != nil {
		t.Skipf("grpcurl is not installed, so the README's grpcurl example is not checked (make deps installs it into .bin): %v", err)
	}
	out, err := exec.CommandContext(ctx, grpcurl, "-plaintext", "-d", body, srv.grpcAddr, "reward.v1.RewardService/Score").CombinedOutput()
	if err != nil {
		t.Fatalf("grpcurl: %v\n%s", err, out)
	}
	check("grpcurl", out)
	out, err = exec.CommandContext(ctx, grpcurl, "-plaintext", srv.grpcAddr, "list").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reward.v1.RewardService") {
		t.Errorf("grpcurl list: %v\n%s", err, out)
	}
}

// TestREADMEBadConfig runs docs/cli.md's bad-config example, its bad.yml
// and its command, and compares what rewardd prints with what the page
// shows.
func TestREADMEBadConfig(t *testing.T) {
	readme, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	const command = "$ rewardd serve --config bad.yml\n"
	before, after, found := strings.Cut(string(readme), "```\n"+command)
	yamlAt := strings.LastIndex(before, "```yaml\n")
	if !found || yamlAt < 0 {
		t.Fatalf("docs/cli.md has no bad.yml block followed by a %q block", strings.TrimSpace(command))
	}
	badYAML, _, _ := strings.Cut(before[yamlAt+len("```yaml\n"):], "```")
	want, _, _ := strings.Cut(after, "```")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(badYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--config", "bad.yml")
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("exit: %v, want status 2", err)
	}
	if string(got) != want {
		t.Errorf("rewardd printed\n%s\ndocs/cli.md shows\n%s", got, want)
	}
}

func TestBadConfigExits2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yml")
	os.WriteFile(path, []byte("functions:\n  - name: cites\n    kind: regex\n    pattern: '['\n    modee: count\n"), 0o644)
	for _, cmd := range [][]string{{"serve", "--config", path}, {"score", "--config", path, "--in", "-"}} {
		_, stderr, exit := runRewardd(t, "", cmd...)
		if exit != 2 || !strings.Contains(stderr, path+":5:") || !strings.Contains(stderr, `"cites"`) || !strings.Contains(stderr, "modee") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s:5, the function and the key", cmd, exit, stderr, path)
		}
	}
	if _, stderr, exit := runRewardd(t, "", "serve", "--workers", "0"); exit != 2 {
		t.Errorf("--workers 0: exit %d (%s), want 2", exit, stderr)
	}
	if _, stderr, exit := runRewardd(t, "", "frobnicate"); exit != 2 {
		t.Errorf("unknown command: exit %d (%s), want 2", exit, stderr)
	}
	// The load generator moved to its own binary: the old command says
	// where, in one line.
	if _, stderr, exit := runRewardd(t, "", "bench", "--scenario", "gsm8k"); exit != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "rewardd-bench") {
		t.Errorf("bench: exit %d, stderr %q; want 2 and one line naming rewardd-bench", exit, stderr)
	}
}

func TestVersionAndDefaultConfig(t *testing.T) {
	out, _, exit := runRewardd(t, "", "version")
	if exit != 0 || !strings.HasPrefix(out, "rewardd ") || !strings.Contains(out, "regex engine "+rematch.Engine()) {
		t.Errorf("version: exit %d, %q, want the regex engine (%s)", exit, out, rematch.Engine())
	}
	out, _, exit = runRewardd(t, "", "serve", "--print-config")
	if exit != 0 || string(config.Default()) != out {
		t.Errorf("--print-config: exit %d, does not print the embedded config", exit)
	}
	// The embedded config scores stdin rows.
	out, stderr, exit := runRewardd(t, `{"id": "a", "completion": "<think>x</think><answer>3</answer>", "answer": "#### 3"}`+"\n", "score", "--in", "-")
	var o struct{ Scores map[string]*float64 }
	if exit != 0 || json.Unmarshal([]byte(out), &o) != nil || o.Scores["accuracy"] == nil || *o.Scores["accuracy"] != 1 {
		t.Errorf("score on stdin: exit %d, %s %s", exit, out, stderr)
	}
}

// TestServeStopsOnSIGTERM checks a clean exit: readiness off, drained, exit 0.
func TestServeStopsOnSIGTERM(t *testing.T) {
	srv := startServer(t)
	srv.stop(t)
	if !srv.exitState.Success() {
		t.Errorf("exit state %v", srv.exitState)
	}
	if !strings.Contains(srv.logText(), `"msg":"stopped"`) {
		t.Errorf("no 'stopped' log line:\n%s", srv.logText())
	}
}

// TestScoreAggregates checks that `rewardd score` writes reward and
// advantage when the config aggregates, that --batch-size cuts batches only
// at group boundaries (group-scaled advantages then equal one big batch's),
// and that they equal the server's.
func TestScoreAggregates(t *testing.T) {
	rows := gsm8kRows(t, 12)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "agg.yml")
	os.WriteFile(cfgPath, append(config.Default(), "aggregation: {mode: sum_then_normalize, scale: group}\n"...), 0o644)
	var in bytes.Buffer
	req := &rewardv1.ScoreRequest{}
	for i, row := range rows {
		row["group"] = fmt.Sprintf("q%d", i/4)
		line, _ := json.Marshal(row)
		in.Write(append(line, '\n'))
		r := toRollout(row)
		r.Group = row["group"].(string)
		delete(r.Fields.Fields, "group")
		req.Rollouts = append(req.Rollouts, r)
	}
	srv := startServer(t, "--config", cfgPath)
	want, err := srv.client(t).Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.GetAdvantages()) != len(rows) {
		t.Fatalf("server gave %d advantages for %d rows", len(want.GetAdvantages()), len(rows))
	}
	for _, batch := range []string{"0", "5"} {
		out, stderr, exit := runRewardd(t, in.String(), "score", "--config", cfgPath, "--in", "-", "--batch-size", batch)
		if exit != 0 {
			t.Fatalf("--batch-size %s: exit %d: %s", batch, exit, stderr)
		}
		for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var o struct{ Reward, Advantage *float64 }
			if err := json.Unmarshal([]byte(line), &o); err != nil || o.Reward == nil || o.Advantage == nil {
				t.Fatalf("--batch-size %s row %d: %s (%v)", batch, i, line, err)
			}
			if math.Abs(*o.Advantage-want.Advantages[i]) > 1e-12 || math.Abs(*o.Reward-want.Rewards[i]) > 1e-12 {
				t.Errorf("--batch-size %s row %d: reward %v advantage %v, server says %v %v", batch, i, *o.Reward, *o.Advantage, want.Rewards[i], want.Advantages[i])
			}
		}
	}
}

// TestServeTLSAndToken runs the real server with TLS and a token file and
// checks that a client needs both.
func TestServeTLSAndToken(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certPath, keyPath, tokenPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "token")
	os.WriteFile(certPath, certPEM, 0o600)
	os.WriteFile(keyPath, keyPEM, 0o600)
	os.WriteFile(tokenPath, []byte("s3cret\n"), 0o600)
	srv := startServer(t, "--tls-cert", certPath, "--tls-key", keyPath, "--auth-token-file", tokenPath)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	conn, err := grpc.NewClient(srv.grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := rewardv1.NewRewardServiceClient(conn)
	ctx := context.Background()
	if _, err := client.ListFunctions(ctx, &rewardv1.ListFunctionsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("TLS without token: %v, want Unauthenticated", err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret")
	if _, err := client.ListFunctions(authed, &rewardv1.ListFunctionsRequest{}); err != nil {
		t.Errorf("TLS with token: %v", err)
	}
	plain, _ := grpc.NewClient(srv.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer plain.Close()
	if _, err := rewardv1.NewRewardServiceClient(plain).ListFunctions(authed, &rewardv1.ListFunctionsRequest{}); err == nil {
		t.Error("a plaintext client was served by a TLS server")
	}
	// rewardd check talks to it too, with the same token and CA.
	if _, stderr, exit := runRewardd(t, "", "check", "--addr", srv.grpcAddr, "--tls-ca", certPath, "--auth-token-file", tokenPath); exit != 0 {
		t.Errorf("check with TLS and token: exit %d: %s", exit, stderr)
	}
	if _, _, exit := runRewardd(t, "", "check", "--addr", srv.grpcAddr, "--tls-ca", certPath); exit != 1 {
		t.Errorf("check with TLS but no token: exit %d, want 1", exit)
	}
	// Without --tls-ca, check names the likely mistake.
	if stdout, _, exit := runRewardd(t, "", "check", "--addr", srv.grpcAddr, "--auth-token-file", tokenPath); exit != 1 || !strings.Contains(stdout, "speaks TLS: add --tls-ca") {
		t.Errorf("plaintext check of a TLS server: exit %d, want 1 naming --tls-ca:\n%s", exit, stdout)
	}
	// And with --tls-ca against a plaintext server, the reverse.
	plainSrv := startServer(t)
	if stdout, _, exit := runRewardd(t, "", "check", "--addr", plainSrv.grpcAddr, "--tls-ca", certPath); exit != 1 || !strings.Contains(stdout, "does not speak TLS: drop --tls-ca") {
		t.Errorf("TLS check of a plaintext server: exit %d, want 1 saying it does not speak TLS:\n%s", exit, stdout)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	resp, err := hc.Get("https://" + srv.httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /healthz over TLS: %d", resp.StatusCode)
	}
}

// selfSigned returns a certificate and key for localhost.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestServeShutdownOrder holds a stream open so that draining cannot end,
// sends SIGTERM, and checks that readiness is off at once, new calls are
// refused, the open stream is still served, and a second SIGTERM stops the
// process without waiting for the grace period.
func TestServeShutdownOrder(t *testing.T) {
	srv := startServer(t)
	client := srv.client(t)
	ctx := context.Background()
	stream, err := client.ScoreStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	batch := &rewardv1.ScoreRequest{BatchId: "1", Rollouts: []*rewardv1.Rollout{{Completion: "<answer>1</answer>", Fields: &structpb.Struct{
		Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue("1")}}}}}
	if err := stream.Send(batch); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}

	srv.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + srv.httpAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz still ready 30 s after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fresh, _ := grpc.NewClient(srv.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer fresh.Close()
	if _, err := rewardv1.NewRewardServiceClient(fresh).Score(ctx, batch); status.Code(err) != codes.Unavailable {
		t.Errorf("new call while draining: %v, want UNAVAILABLE", err)
	}
	if code, body := httpPost(t, "http://"+srv.httpAddr+"/v1/score", `{"rollouts": [{"completion": "1"}]}`); code != http.StatusServiceUnavailable {
		t.Errorf("HTTP scoring while draining: %d %s, want 503", code, body)
	}
	batch.BatchId = "2"
	if err := stream.Send(batch); err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); err != nil || resp.GetBatchId() != "2" {
		t.Errorf("the open stream while draining: %v %v", resp, err)
	}

	srv.cmd.Process.Signal(syscall.SIGTERM)
	<-srv.drained
	err = srv.cmd.Wait()
	srv.exitState = srv.cmd.ProcessState
	if ws, ok := srv.exitState.Sys().(syscall.WaitStatus); err == nil || !ok || !ws.Signaled() {
		t.Errorf("after the second SIGTERM: %v, want killed by the signal", err)
	}
}

// TestServeOverload offers far more concurrent work than the server admits
// and checks that every request is answered, the excess at once with
// RESOURCE_EXHAUSTED and nothing else, and that the server takes work again
// as soon as the load stops. The load is bounded in time and count.
func TestServeOverload(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "small.yml")
	cfg := append(config.Default(), "limits: {max_inflight_requests: 2}\n"...)
	os.WriteFile(cfgPath, cfg, 0o644)
	srv := startServer(t, "--config", cfgPath, "--workers", "2")
	client := srv.client(t)
	rows := gsm8kRows(t, 300)
	req := &rewardv1.ScoreRequest{}
	for len(req.Rollouts) < 2048 {
		req.Rollouts = append(req.Rollouts, toRollout(rows[len(req.Rollouts)%len(rows)]))
	}

	const clients, perClient = 24, 40
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	var slowestRefusal time.Duration
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range perClient {
				if time.Now().After(stop) {
					return
				}
				start := time.Now()
				_, err := client.Score(context.Background(), req)
				took := time.Since(start)
				mu.Lock()
				codesSeen[status.Code(err)]++
				if status.Code(err) == codes.ResourceExhausted && took > slowestRefusal {
					slowestRefusal = took
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("answers by code: %v; slowest refusal %v", codesSeen, slowestRefusal)
	for code := range codesSeen {
		if code != codes.OK && code != codes.ResourceExhausted {
			t.Errorf("%d answers with %v: overload must be OK or RESOURCE_EXHAUSTED only", codesSeen[code], code)
		}
	}
	if codesSeen[codes.OK] == 0 || codesSeen[codes.ResourceExhausted] == 0 {
		t.Errorf("answers %v: want both accepted work and refusals", codesSeen)
	}
	if _, err := client.Score(context.Background(), req); err != nil {
		t.Errorf("right after the load stopped: %v", err)
	}
}

func httpPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
