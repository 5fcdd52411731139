package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
)

// Calibration tells the truth: a family whose table has no usable rows is not
// fitted and keeps its default, and the profile's provenance and the warnings
// say so; a run that fits nothing is an error and writes nothing.

// kernelTableFamilies maps each kernel table to the family prefix it fits.
func kernelTableFamilies() []struct{ family, files string } {
	return []struct{ family, files string }{
		{"gemm", "gemm.csv"},
		{"attention_prefill", "context_attention.csv"},
		{"attention_decode", "generation_attention.csv"},
		{"moe", "moe.csv"},
		{"allreduce", "custom_allreduce.csv, nccl.csv"},
	}
}

// kernelFitTruth checks a kernel calibration: at least one family fitted,
// and for every family a table covers, whether it was fitted and from how
// many rows. It adds to the note of the profile's kernels stage which
// families were fitted and which kept their defaults, records the rows
// fitted, and returns a warning for each family that kept its default.
func kernelFitTruth(res *kernels.Result, dir string) (warnings []string, err error) {
	var fitted, kept []string
	total := 0
	for _, t := range kernelTableFamilies() {
		rows := 0
		for _, f := range res.Families {
			if f.Family == t.family || strings.HasPrefix(f.Family, t.family+"_") {
				rows += f.Train.N + f.Holdout.N
			}
		}
		total += rows
		if rows > 0 {
			fitted = append(fitted, fmt.Sprintf("%s (%d rows)", t.family, rows))
			continue
		}
		kept = append(kept, t.family)
		warnings = append(warnings, fmt.Sprintf("%s: no usable rows in %s; not fitted, default kept", t.family, t.files))
	}
	if len(fitted) == 0 {
		return nil, fmt.Errorf("calibrate: no usable rows in any kernel table under %s; nothing fitted, nothing written", dir)
	}
	note := "fitted: " + strings.Join(fitted, ", ")
	if len(kept) > 0 {
		note += "; not fitted, defaults kept: " + strings.Join(kept, ", ")
	}
	for _, p := range []*hardware.Profile{res.Profile, gpuProfile(res)} {
		if p != nil {
			p.Provenance = withKernelsNote(p.Provenance, note, total)
		}
	}
	return warnings, nil
}

// gpuProfile is res.GPU's profile when it is not res.Profile itself (nil
// otherwise), so that a note goes into each profile once.
func gpuProfile(res *kernels.Result) *hardware.Profile {
	if res.GPU == nil || res.GPU.Profile == res.Profile {
		return nil
	}
	return res.GPU.Profile
}

// withKernelsNote adds note to the kernels stage of pv and records rows as
// the rows it used; pv is returned unchanged when it has no kernels stage.
func withKernelsNote(pv hardware.Provenance, note string, rows int) hardware.Provenance {
	st, ok := pv.Stage(hardware.StageKernels)
	if !ok {
		return pv
	}
	if st.Note != "" {
		note = st.Note + "; " + note
	}
	st.Note, st.Rows = note, rows
	return pv.With(st)
}

// checkWritable fails early (before minutes of fitting or simulating) when
// path cannot be written: a missing directory, a directory in its place, or
// no permission to create a file beside it.
func checkWritable(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s: %q is a directory", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%s: directory of %q does not exist", flag, path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: cannot write in %q: %w", flag, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// maxServingConcurrency bounds a serving row's concurrency (batch_size): the
// row is simulated as a closed loop of that many clients.
const maxServingConcurrency = 1 << 16

// checkServingRows refuses serving rows whose simulation would be unbounded: a
// concurrency (batch_size) above maxServingConcurrency, token counts past
// limits.MaxTokens, or more requests per row than limits.MaxRequestsDefault
// (concurrency x requests per client).
func checkServingRows(file string, rows []serving.Row, perClient int) error {
	if err := limits.IntIn(perClient, 1, 10_000); err != nil {
		return fmt.Errorf("--requests-per-client: %w", err)
	}
	for _, r := range rows {
		where := fmt.Sprintf("%s:%d", file, r.Line)
		if err := limits.IntIn(r.Concurrency, 1, maxServingConcurrency); err != nil {
			return fmt.Errorf("%s: batch_size: %w", where, err)
		}
		if err := limits.IntIn(r.ISL+r.OSL, 2, limits.MaxTokens); err != nil {
			return fmt.Errorf("%s: isl + osl: %w", where, err)
		}
		if n := r.Concurrency * perClient; n > limits.MaxRequestsDefault {
			return fmt.Errorf("%s: batch_size %d x --requests-per-client %d = %d simulated requests; at most %d", where, r.Concurrency, perClient, n, limits.MaxRequestsDefault)
		}
	}
	return nil
}
