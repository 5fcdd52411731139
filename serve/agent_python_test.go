package serve

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReferenceAgentProtocol runs tools/gpu-agent/agent.py's HTTP server
// (with the stand-in for PyTorch from its own tests, so no GPU is needed)
// and talks to it with AgentClient: the Python agent and the Go client
// agree on protocol 1. Skipped when python3 is missing.
func TestReferenceAgentProtocol(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3 installed; CI must have it (apt-get install python3)")
		}
		t.Skip("no python3 installed (apt-get install python3); skipping the reference agent's protocol test")
	}
	dir, err := filepath.Abs("../tools/gpu-agent")
	if err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(t.TempDir(), "run_agent.py")
	script := `import sys
sys.path.insert(0, sys.argv[1])
import agent, test_agent
from http.server import ThreadingHTTPServer
srv = ThreadingHTTPServer(("127.0.0.1", 0), agent.make_handler(agent.Bench(test_agent.fake_torch(cc=(9, 0), launch_s=25e-6))))
print(srv.server_address[1], flush=True)
srv.serve_forever()
`
	if err := os.WriteFile(launcher, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, launcher, dir)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1") // no __pycache__ in the tree
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("agent did not start: %v", err)
	}
	c := &AgentClient{BaseURL: "http://127.0.0.1:" + strings.TrimSpace(port)}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Device != "Fake GPU" || !info.Precisions["fp8"].Supported || info.Precisions["nvfp4"].Supported {
		t.Errorf("info %+v", info)
	}
	res, err := c.GEMM(ctx, GEMMRequest{M: 64, N: 4096, K: 4096, Precision: "bf16", Repeats: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "ok" || res.TimeS < 24e-6 || res.TimeS > 26e-6 || res.Kernel != "torch.matmul" {
		t.Errorf("bf16: %+v, want ok at 25 us per launch", res)
	}
	res, err = c.GEMM(ctx, GEMMRequest{M: 1, N: 4096, K: 4096, Precision: "int8"})
	if err != nil || res.Status != "unsupported" || !strings.Contains(res.Reason, "greater than 16") {
		t.Errorf("int8 at m=1: %+v %v, want unsupported with PyTorch's reason", res, err)
	}
	if _, err := c.GEMM(ctx, GEMMRequest{M: 0, N: 1, K: 1, Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), "m: must be") {
		t.Errorf("m=0: err %v, want the agent's 400 message", err)
	}
}
