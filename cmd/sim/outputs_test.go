package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/roofsim/roofsim/sweep"
)

// --out DIR never mixes runs: a directory of results is refused, then
// replaced whole with --overwrite (no stale steps.csv beside new jsonl
// traces); a directory of other files is never replaced; an empty one is
// used. Nothing temporary is left beside it.
func TestOutDirNeverMixes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "res")
	run := func(args ...string) (int, string) {
		code, _, errOut := cli(t, append([]string{"run", "--workload", "testdata/small.yaml", "--quiet", "--out", dir}, args...)...)
		return code, errOut
	}
	if code, errOut := run("--step-trace"); code != 0 {
		t.Fatal(errOut)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if got := listDir(t, dir); !slices.Equal(got, []string{".", "requests.csv", "run.json", "steps.csv"}) {
		t.Fatalf("first run wrote %v", got)
	}
	if code, errOut := run("--trace-format", "jsonl"); code != 1 || !strings.Contains(errOut, "already holds results; pass --overwrite") {
		t.Errorf("second run into results: exit %d, %q", code, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "run.json")); !bytes.Equal(first, again) {
		t.Error("a refused run changed run.json")
	}
	if code, errOut := run("--trace-format", "jsonl", "--overwrite"); code != 0 {
		t.Fatal(errOut)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{".", "requests.jsonl", "run.json"}) {
		t.Errorf("after --overwrite: %v, want only the new run's files", got)
	}
	if got := listDir(t, parent); !slices.Equal(got, []string{".", "res", "res/requests.jsonl", "res/run.json"}) {
		t.Errorf("parent holds %v: temporary files left behind", got)
	}

	other := filepath.Join(parent, "notes")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "todo.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--out", other, "--overwrite")
	if code != 1 || !strings.Contains(errOut, "holds no run.json") {
		t.Errorf("--overwrite of a directory of other files: exit %d, %q", code, errOut)
	}
	if got := listDir(t, other); !slices.Equal(got, []string{".", "todo.txt"}) {
		t.Errorf("other files touched: %v", got)
	}

	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--quiet", "--out", empty); code != 0 {
		t.Errorf("empty directory refused: %q", errOut)
	}
}

// Several output files are written together: when one fails, none is
// written, an existing one is unchanged, and no temporary file is left.
func TestWriteFilesTogether(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.csv")
	if err := os.WriteFile(a, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	err := writeFilesTogether([]fileOutput{
		{flag: "--out", path: a, write: write("new")},
		{flag: "--csv", path: b, write: func(io.Writer) error { return errors.New("disk full") }},
	})
	if err == nil || !strings.Contains(err.Error(), "--csv: disk full") {
		t.Errorf("err = %v", err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{".", "a.parquet"}) {
		t.Errorf("after a failed write: %v", got)
	}
	if data, _ := os.ReadFile(a); string(data) != "old" {
		t.Errorf("a.parquet = %q, want it unchanged", data)
	}
	if err := writeFilesTogether([]fileOutput{{flag: "--out", path: a, write: write("new")}, {flag: "--csv", path: b, write: write("b")}}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(a); string(data) != "new" {
		t.Errorf("a.parquet = %q", data)
	}
}

// buildSim builds the sim binary once per test into a temporary directory.
func buildSim(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "sim")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// longWorkload takes minutes to simulate.
const longWorkload = `clients:
  - arrival: {rate: 50, num_requests: 1000000}
    prompt_tokens: {dist: constant, value: 500}
    output_tokens: {dist: constant, value: 200}
`

// Real signals to the built binary: SIGINT, SIGTERM and SIGHUP stop a run
// with status 130, 143 and 129, and it leaves no file and no directory (the
// --out parents it made are removed too). Each run is bounded by a kill
// after 30 s (a hang guard); how promptly a run stops is a count, checked in
// sim (TestRunContextCancelledMidway) and by TestInterruptibleReturnsTheCause.
func TestSignalsStopRun(t *testing.T) {
	bin := buildSim(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "long.yaml")
	if err := os.WriteFile(wl, []byte(longWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(signalName(sig), func(t *testing.T) {
			work := filepath.Join(dir, signalName(sig))
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "run", "--workload", wl, "--quiet", "--step-trace", "--out", filepath.Join(work, "a", "b"))
			cmd.Stderr = &stderr
			// Signal it once the run is writing (its staged directory exists).
			writing := func() bool {
				m, _ := filepath.Glob(filepath.Join(work, "a", ".b.tmp-*"))
				return len(m) > 0
			}
			took := signalWhenReady(t, cmd, sig, writing, 300*time.Millisecond)
			t.Logf("%s: stopped %v after the signal, exit %d", signalName(sig), took.Round(time.Millisecond), cmd.ProcessState.ExitCode())
			if want := 128 + int(sig); cmd.ProcessState.ExitCode() != want {
				t.Errorf("exit %d, want %d (stderr %q)", cmd.ProcessState.ExitCode(), want, stderr.String())
			}
			if got := stderr.String(); got != "sim: interrupted by "+signalName(sig)+"\n" {
				t.Errorf("stderr %q", got)
			}
			if got := listDir(t, work); !slices.Equal(got, []string{"."}) {
				t.Errorf("left behind: %v", got)
			}
		})
	}
}

// SIGTERM to a sweep writes a valid partial result that says it is partial,
// and exits 143.
func TestSignalSweepPartial(t *testing.T) {
	bin := buildSim(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("clients:\n  - arrival: {rate: 5, num_requests: 100}\n    prompt_tokens: {dist: constant, value: 500}\n    output_tokens: {dist: constant, value: 200}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, csv := filepath.Join(dir, "s.parquet"), filepath.Join(dir, "s.csv")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "sweep", "--workload", wl, "--quiet", "--gpus", "h100,h200,a100-80gb,l40s", "--tp", "1,2,4,8",
		"--max-num-seqs", "64,128,256", "--slo", "ttft_p99=500ms,tpot_p99=50ms", "--requests", "20000", "--jobs", "1", "--out", out, "--csv", csv)
	cmd.Stderr = &stderr
	took := signalWhenReady(t, cmd, syscall.SIGTERM, nil, 2*time.Second)
	t.Logf("sweep stopped %v after SIGTERM, exit %d", took.Round(time.Millisecond), cmd.ProcessState.ExitCode())
	if cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("exit %d, want 143 (stderr %q)", cmd.ProcessState.ExitCode(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "partial results") {
		t.Errorf("stderr %q does not say the result is partial", stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.ReadParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || !res.Interrupted || res.GridSize != 48 || len(res.Rows) >= 48 {
		t.Errorf("partial %v, interrupted %v, grid %d, rows %d", res.Partial, res.Interrupted, res.GridSize, len(res.Rows))
	}
	if _, err := os.Stat(csv); err != nil {
		t.Errorf("partial CSV: %v", err)
	}
}

// signalWhenReady starts cmd, waits until ready reports true (polled every
// 20 ms for up to 30 s; nil is ready at once) and then settle longer, sends
// sig, and waits up to 30 s for cmd to exit. It returns how long cmd took
// to stop after the signal; cmd.ProcessState holds its exit.
func signalWhenReady(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, ready func() bool, settle time.Duration) time.Duration {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ready != nil && !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s never got ready to be signalled", cmd.Args[1])
		}
	}
	time.Sleep(settle)
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s still running 30 s after %s", cmd.Args[1], signalName(sig))
	}
	return time.Since(sent)
}

// readCSV reads a whole CSV file: its records, header first, and each header
// name's column index.
func readCSV(t *testing.T, path string) ([][]string, map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: empty", path)
	}
	col := make(map[string]int, len(recs[0]))
	for i, h := range recs[0] {
		col[h] = i
	}
	return recs, col
}
