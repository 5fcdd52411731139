package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// kernelTables writes the H100 kernel tables into a temporary directory with
// the first rows of each named table and only the header of the others.
func kernelTables(t *testing.T, rows map[string]int) string {
	t.Helper()
	src := shareddata.Path(t, "kernels", "h100_sxm")
	dir := t.TempDir()
	for _, name := range []string{"gemm", "context_attention", "generation_attention", "moe", "nccl", "custom_allreduce"} {
		in, err := os.Open(filepath.Join(src, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sc := bufio.NewScanner(in)
		for n := 0; n <= rows[name] && sc.Scan(); n++ {
			out.WriteString(sc.Text() + "\n")
		}
		in.Close()
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Calibration tells the truth: header-only tables are an error that writes
// nothing; a table without rows leaves its family at the default, which the
// warnings and the profile's kernels stage say; an output that cannot be
// written is refused before any fitting.
func TestCalibrateTellsTheTruth(t *testing.T) {
	empty := kernelTables(t, nil)
	out := filepath.Join(t.TempDir(), "p.yaml")
	code, _, errOut := cli(t, "calibrate", "--gpu", "h100", "--kernels", empty, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(errOut, "no usable rows in any kernel table") {
		t.Errorf("header-only tables: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("header-only tables wrote a profile")
	}

	some := kernelTables(t, map[string]int{"context_attention": 299})
	code, stdout, errOut := cli(t, "calibrate", "--gpu", "h100", "--kernels", some, "--out", out, "--quiet", "--profile-only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "warning: gemm: no usable rows in gemm.csv; not fitted, default kept") {
		t.Errorf("no warning for the unfitted GEMM family:\n%s", stdout)
	}
	p, err := hardware.LoadProfile(out)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := p.Provenance.Stage(hardware.StageKernels)
	if !ok || st.Rows != 299 || !strings.HasSuffix(st.Note, "; fitted: attention_prefill (299 rows); not fitted, defaults kept: gemm, attention_decode, moe, allreduce") {
		t.Errorf("the kernels stage does not say what was fitted: %+v", st)
	}

	// An unwritable --out is refused before fitting, indeed before the
	// tables are read: with a --kernels directory that does not exist
	// either, the error names --out.
	code, _, errOut = cli(t, "calibrate", "--gpu", "h100", "--kernels", filepath.Join(t.TempDir(), "absent"), "--out", filepath.Join(t.TempDir(), "no", "such", "dir.yaml"))
	if code != 1 || !strings.Contains(errOut, "--out: directory of") {
		t.Errorf("unwritable --out: exit %d, %q", code, errOut)
	}
}

// SIGINT stops sim calibrate (about a minute of fitting on the H100 tables)
// with status 130, and no profile is written; that it returns at once is
// TestInterruptibleReturnsTheCause.
func TestSignalStopsCalibrate(t *testing.T) {
	bin := buildSim(t)
	kernelsDir := shareddata.Path(t, "kernels", "h100_sxm")
	dir := t.TempDir()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "calibrate", "--gpu", "h100", "--kernels", kernelsDir, "--out", filepath.Join(dir, "h100.yaml"), "--quiet")
	cmd.Stderr = &stderr
	took := signalWhenReady(t, cmd, syscall.SIGINT, nil, 2*time.Second)
	t.Logf("calibrate stopped %v after SIGINT, exit %d", took.Round(time.Millisecond), cmd.ProcessState.ExitCode())
	if cmd.ProcessState.ExitCode() != 130 || stderr.String() != "sim: interrupted by SIGINT\n" {
		t.Errorf("exit %d, stderr %q; want 130 and one line", cmd.ProcessState.ExitCode(), stderr.String())
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"."}) {
		t.Errorf("left behind: %v", got)
	}
}
