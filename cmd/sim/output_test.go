package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Atomic writes leave either the whole file (mode 0644) or nothing.
func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := atomicWriteBytes(path, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "hello\n" || st.Mode().Perm() != 0o644 {
		t.Errorf("wrote %q with mode %v", data, st.Mode().Perm())
	}
	failed := filepath.Join(dir, "b.txt")
	boom := errors.New("boom")
	if err := atomicWriteFile(failed, func(w io.Writer) error { _, _ = w.Write([]byte("part")); return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the writer's", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d entries, want only a.txt", len(entries))
	}
	if err := atomicWriteBytes(filepath.Join(dir, "missing", "c.txt"), nil); err == nil {
		t.Error("writing into a missing directory: want an error")
	}
}

// A replayed trace runs without a workload file, with the settings from
// flags and the defaults, and run.json says where the requests came from.
func TestRunTrace(t *testing.T) {
	cfg := runJSONConfig(t, "--trace", "../../examples/replay.csv", "--gpu", "a100")
	if cfg["trace"] != "../../examples/replay.csv" || cfg["gpu"] != "a100-80gb" || cfg["model"] != "llama-3.1-8b" {
		t.Errorf("run.json config: trace %v gpu %v model %v", cfg["trace"], cfg["gpu"], cfg["model"])
	}
	if _, ok := cfg["workload"]; ok {
		t.Error("no workload file: run.json must not name one")
	}
}

// --shard env/n takes the index from JOB_COMPLETION_INDEX.
func TestShardFromEnv(t *testing.T) {
	if _, err := parseShardFlag("env/4"); err == nil || !strings.Contains(err.Error(), "JOB_COMPLETION_INDEX is not set") {
		t.Errorf("unset index: %v", err)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	sh, err := parseShardFlag("env/4")
	if err != nil || !sh.Has(2) || sh.Has(3) {
		t.Errorf("env/4 with index 2: %+v, %v", sh, err)
	}
}

// Flag values of every type that do not parse are named the same way.
func TestFlagTypeErrors(t *testing.T) {
	for _, tc := range []struct{ flag, value, want string }{
		{"gpu-memory-utilization", "most", `--gpu-memory-utilization: want a number, got "most"`},
		{"duration", "soon", `--duration: want a duration such as 90s or 10m, got "soon"`},
		{"seed", "x", `--seed: want a non-negative integer, got "x"`},
	} {
		code, _, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--"+tc.flag, tc.value)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("--%s %s: exit %d, %q; want %q", tc.flag, tc.value, code, errOut, tc.want)
		}
	}
}
