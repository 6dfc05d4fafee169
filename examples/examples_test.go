// Package examples holds configs for the trainers rewardd plugs into; this
// test runs each one against a real server.
package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/rewardd/rewardd/internal/servertest"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs the config at path behind real gRPC and HTTP listeners on
// loopback and returns their addresses.
func serve(t *testing.T, path string) (grpcAddr, httpURL string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, data, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, server.Options{Config: cfg, Workers: 2})
	return srv.GRPCAddr, srv.HTTPURL
}

func postFile(t *testing.T, url, path string) map[string]any {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s with %s: %d %s", url, path, resp.StatusCode, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestEveryConfigLoads(t *testing.T) {
	paths, _ := filepath.Glob("*/rewardd.yaml")
	if len(paths) != 4 {
		t.Fatalf("found %v", paths)
	}
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		if _, err := config.Load(p, data, builtin.Registry()); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestOpenRLHF posts the body OpenRLHF's remote reward client sends.
func TestOpenRLHF(t *testing.T) {
	_, url := serve(t, "openrlhf/rewardd.yaml")
	got := postFile(t, url+"/get_reward", "openrlhf/request.json")
	// accuracy + 0.1·format: right and formatted, wrong and formatted, right
	// in GSM8K style.
	if fmt.Sprint(got["rewards"]) != "[1.1 0.1 1]" || fmt.Sprint(got["scores"]) != fmt.Sprint(got["rewards"]) {
		t.Errorf("rewards %v scores %v, want [1.1 0.1 1]", got["rewards"], got["scores"])
	}
}

// TestNeMoGym posts a verify body as NeMo Gym's agent sends it.
func TestNeMoGym(t *testing.T) {
	_, url := serve(t, "nemo-gym/rewardd.yaml")
	got := postFile(t, url+"/verify", "nemo-gym/verify_request.json")
	if r, _ := got["reward"].(float64); math.Abs(r-1.1) > 1e-12 || got["expected_answer"] != "42" {
		t.Errorf("reward %v (want 1.1), body %v", got["reward"], got)
	}
}

// TestNeMoGymReasoningOnly posts a response with only a reasoning item, as
// a reasoning model's rollout can end: it gets a number (NeMo Gym's
// SimpleAgentVerifyResponse needs a float), 0 here as its completion is
// empty; and the metrics NeMo Gym asks for at the end of a collection.
func TestNeMoGymReasoningOnly(t *testing.T) {
	_, url := serve(t, "nemo-gym/rewardd.yaml")
	got := postFile(t, url+"/verify", "nemo-gym/verify_reasoning_only.json")
	if r, ok := got["reward"].(float64); !ok || r != 0 || got["accuracy_outcome"] != "ok" {
		t.Errorf("reasoning-only response: reward %v, accuracy %v (%v), want 0 and ok", got["reward"], got["accuracy"], got["accuracy_outcome"])
	}
	metrics := postFile(t, url+"/aggregate_metrics", "nemo-gym/aggregate_metrics_request.json")
	key, _ := metrics["key_metrics"].(map[string]any)
	groups, _ := metrics["group_level_metrics"].([]any)
	if r, _ := key["mean/reward"].(float64); math.Abs(r-2.1/3) > 1e-12 || len(groups) != 2 {
		t.Errorf("aggregate_metrics: key %v, %d groups; want mean/reward 0.7 and 2 groups", key, len(groups))
	}
}

// verlDriver calls the reward function the verl config names as verl's
// reward loop does: once per sample, awaited, all of a batch at once, with
// the config's reward_kwargs.
const verlDriver = `
import asyncio, importlib, json, sys
name, kwargs = sys.argv[1], json.loads(sys.argv[2])
fn = getattr(importlib.import_module("rewardd_client.verl"), name)
samples = [
    ("openai/gsm8k", "<think>16 - 7 = 9</think><answer>9</answer>", "9"),
    ("openai/gsm8k", "16 - 7 = 8. The answer is 8", "9"),
    ("other", "The answer is 9", "9"),
]
async def main():
    return await asyncio.gather(*(fn(data_source=d, solution_str=s, ground_truth=g, extra_info={"split": "test"}, **kwargs) for d, s, g in samples))
print(json.dumps([r["score"] for r in asyncio.run(main())]))
`

// TestVerl runs the reward function verl/reward.yaml configures against a
// server with verl/rewardd.yaml, and checks that its sandbox_fusion URL is
// the server's /run_code, which answers SandboxFusion's body.
func TestVerl(t *testing.T) {
	grpcAddr, url := serve(t, "verl/rewardd.yaml")
	data, err := os.ReadFile("verl/reward.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Reward struct {
			CustomRewardFunction struct {
				Path, Name   string
				RewardKwargs map[string]any `yaml:"reward_kwargs"`
			} `yaml:"custom_reward_function"`
		}
		RewardModel struct {
			SandboxFusion struct{ URL string } `yaml:"sandbox_fusion"`
		} `yaml:"reward_model"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	fn := cfg.Reward.CustomRewardFunction
	if fn.Path != "pkg://rewardd_client.verl" {
		t.Fatalf("custom_reward_function.path %q", fn.Path)
	}
	kwargs, _ := json.Marshal(fn.RewardKwargs)
	// accuracy + 0.2·format: right and formatted; wrong, no tags; "other"
	// scores accuracy alone.
	if got := runPython(t, grpcAddr, verlDriver, fn.Name, string(kwargs)); got != "[1.2, 0.0, 1.0]" {
		t.Errorf("verl scores %s, want [1.2, 0.0, 1.0]", got)
	}
	runCode := strings.Replace(cfg.RewardModel.SandboxFusion.URL, "http://127.0.0.1:8080", url, 1)
	if !strings.HasSuffix(runCode, "/run_code") {
		t.Fatalf("sandbox_fusion.url %q is not rewardd's /run_code", cfg.RewardModel.SandboxFusion.URL)
	}
	resp, err := http.Post(runCode, "application/json", strings.NewReader(`{"code": "print(1)", "language": "python"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.Status == "" {
		t.Errorf("POST %s: %d %+v (%v), want SandboxFusion's answer", runCode, resp.StatusCode, answer, err)
	}
}

// driver calls reward functions as TRL's GRPOTrainer does: one after the
// other, with the same prompts, completions and dataset columns.
const driver = `
import importlib, json, sys
mode, arg = sys.argv[1], sys.argv[2]
if mode == "names":
    fns = []
    for name in json.loads(arg):
        module, _, attr = name.rpartition(".")
        fns.append(getattr(importlib.import_module(module), attr))
else:
    sys.path.insert(0, arg)
    fns = importlib.import_module("train_grpo").reward_funcs()
prompts = ["Janet has 16 eggs and uses 7. How many are left?"] * 2
completions = ["<think>16 - 7 = 9</think><answer>9</answer>", "<think>7 7 7 7 7 7</think><answer>7</answer>"]
answer = ["16 - 7 = <<16-7=9>>9\n#### 9"] * 2
print(json.dumps([f(prompts=prompts, completions=completions, completion_ids=[[1], [2]], answer=answer) for f in fns]))
`

func runDriver(t *testing.T, grpcAddr string, args ...string) string {
	t.Helper()
	return runPython(t, grpcAddr, driver, args...)
}

// runPython runs the Python program with args, the client on its path and
// REWARDD_ADDR set to grpcAddr, and returns what it prints.
func runPython(t *testing.T, grpcAddr, program string, args ...string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skipf("Debian's /usr/bin/python3 is needed to run the Python client (make deps installs python3-grpcio): %v", err)
	}
	abs, _ := filepath.Abs("../clients/python")
	cmd := exec.CommandContext(context.Background(), "/usr/bin/python3", append([]string{"-c", program}, args...)...)
	cmd.Env = append(os.Environ(), "REWARDD_ADDR="+grpcAddr, "PYTHONPATH="+abs, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// want is accuracy, format, repetition on the driver's two completions;
// the second has 4 word trigrams of which 3 differ: −(1 − 3/4).
const want = "[[1.0, 0.0], [1.0, 1.0], [0.0, -0.25]]"

// TestAxolotl imports the reward functions the Axolotl config names and
// calls them as TRL does.
func TestAxolotl(t *testing.T) {
	grpcAddr, _ := serve(t, "axolotl/rewardd.yaml")
	data, err := os.ReadFile("axolotl/grpo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		TRL struct {
			RewardFuncs []string `yaml:"reward_funcs"`
		} `yaml:"trl"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	names, _ := json.Marshal(cfg.TRL.RewardFuncs)
	if got := runDriver(t, grpcAddr, "names", string(names)); got != want {
		t.Errorf("rewards %s, want %s", got, want)
	}
}

// TestTRL calls the reward functions the TRL script hands to GRPOTrainer.
func TestTRL(t *testing.T) {
	grpcAddr, _ := serve(t, "axolotl/rewardd.yaml")
	abs, _ := filepath.Abs("trl")
	if got := runDriver(t, grpcAddr, "script", abs); got != want {
		t.Errorf("rewards %s, want %s", got, want)
	}
}

// TestExamplesWriteOutsideTheClone: what the trainers write (checkpoints,
// logs) goes to absolute paths, so running an example from the clone's root
// writes nothing inside it.
func TestExamplesWriteOutsideTheClone(t *testing.T) {
	for file, pattern := range map[string]string{
		"axolotl/grpo.yaml":         `(?m)^output_dir: (\S+)`,
		"trl/train_grpo.py":         `(?m)^OUTPUT_DIR = "([^"]+)"`,
		"openrlhf/train_ppo_ray.sh": `--save_path (\S+)`,
		"verl/run_verl.sh":          `trainer.default_local_dir=(\S+)`,
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindSubmatch(data)
		if m == nil {
			t.Errorf("%s: no output path (%s)", file, pattern)
			continue
		}
		if !filepath.IsAbs(string(m[1])) {
			t.Errorf("%s writes to %s, inside whatever directory it runs from: give an absolute path outside the clone", file, m[1])
		}
	}
	if data, _ := os.ReadFile("openrlhf/train_ppo_ray.sh"); !regexp.MustCompile(`--ckpt_path /`).Match(data) {
		t.Error("openrlhf/train_ppo_ray.sh: --ckpt_path is not an absolute path")
	}
}
