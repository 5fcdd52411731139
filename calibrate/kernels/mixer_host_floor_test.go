package kernels

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// mlaRowEager: kernel-level rows and context module rows were timed
// eagerly, generation module rows in a CUDA graph.
func TestMLARowEager(t *testing.T) {
	for _, c := range []struct {
		r    MLAModuleRow
		want bool
	}{
		{MLAModuleRow{Phase: "generation", BackendOnly: true}, true},
		{MLAModuleRow{Phase: "context", BackendOnly: true}, true},
		{MLAModuleRow{Phase: "context"}, true},
		{MLAModuleRow{Phase: "generation"}, false},
	} {
		if got := mlaRowEager(c.r); got != c.want {
			t.Errorf("phase %s backend-only %v: eager %v, want %v", c.r.Phase, c.r.BackendOnly, got, c.want)
		}
	}
}

// Kernel-level decode rows timed eagerly at a 100 us host floor (truth's
// GPU time plus the backend's per-head matmuls, at least 100 us a call:
// the small shapes) are fitted back with the floor kept and recovered,
// the memory curve and launch held at the base profile's decode
// attention's (the truth's, as a CUDA-graph table of the same GPU would
// show them) and the other terms free (truth has a per-request cost the
// base lacks, so first principles is worse and the fit is kept); the
// fitted efficiency without its floor (what
// the step model charges) matches truth's GPU time on the rows under the
// floor, and the stage's profile carries the floor as a benchmark term.
func TestCalibrateMixersHostFloor(t *testing.T) {
	g, base := mixerGPU(), mixerIdealProfile()
	g.PeakTFLOPS["bf16"] = 400
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.7, Half: 2e9}, Memory: hardware.Curve{Max: 0.8, Half: 3e6, Exp: 1}, LaunchUS: 5, PerSeqHeadUS: 0.2}
	bf16, _ := roofline.LookupPrecision("bf16")
	pr := mixerPrecisions{bf16: bf16, peak: 400e12}
	d := roofline.MLADims{KVLoRA: 512, Nope: 128, Rope: 64, V: 128}
	const hostUS = 100
	base.AttentionDecode.Memory, base.AttentionDecode.LaunchUS = truth.Memory, truth.LaunchUS
	k := &Tables{}
	var gpu []float64 // truth's GPU time of each row, s
	var floored int
	for _, h := range []int{8, 16, 32, 64, 128} {
		for _, b := range []int{1, 4, 16, 64, 256} {
			for _, s := range []int{256, 1024, 4096, 16384} {
				r := MLAModuleRow{Phase: "generation", KernelSource: "K", MLADtype: "bfloat16", KVDtype: "bfloat16", GEMMType: "bfloat16",
					Heads: h, Batch: b, Step: s, Widths: dsv3, BackendOnly: true}
				c := roofline.MLADecodeAttention(float64(b*s), b, h, d, bf16, bf16)
				tg := roofline.BatchedOpSeconds(c, b, truth, pr.peak, g.BandwidthBytesPerSec()) + mlaModuleOffset(r, g, base, base.GEMMFor("bf16"), pr)
				if tg < hostUS*1e-6 {
					floored++
				}
				gpu = append(gpu, tg)
				r.LatencyMS = max(tg, hostUS*1e-6) * 1e3
				k.MLAGeneration = append(k.MLAGeneration, r)
			}
		}
	}
	if floored < 20 || floored > len(gpu)-20 {
		t.Fatalf("%d of %d rows under the floor: the grid does not test it", floored, len(gpu))
	}
	res, err := CalibrateMixers(k, MixerOptions{GPU: g, Base: base, Folds: 4, Seed: 1, Restarts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) != 1 {
		t.Fatalf("got %d fits, want mla_decode", len(res.Fits))
	}
	f := res.Fits[0]
	h := f.HostFloor
	if h == nil || !h.Kept || !(h.FloorLoss < h.FreeLoss) {
		t.Fatalf("host floor not kept or not better: %+v", h)
	}
	if ape := calibrate.APE(h.HostUS, hostUS); ape > 3 {
		t.Errorf("host floor %.2f us, want %d (%.1f%%)", h.HostUS, hostUS, ape)
	}
	if e := f.Efficiency; e.BenchHostUS != h.HostUS || !f.Kept || f.Fitted.P90APE > 2 || f.CVMedian > 5 {
		t.Errorf("efficiency floor %g us (choice %g), kept %v, fitted p90 %.2f%%, CV %.2f%%", e.BenchHostUS, h.HostUS, f.Kept, f.Fitted.P90APE, f.CVMedian)
	}
	if got := f.Efficiency; got.LaunchUS != truth.LaunchUS || got.Memory != truth.Memory {
		t.Errorf("launch %g us, memory %+v: want the base profile's %g and %+v held", got.LaunchUS, got.Memory, truth.LaunchUS, truth.Memory)
	}
	if e, ok := res.Profile.Mixer(hardware.MixerMLADecode); !ok || e.BenchHostUS != h.HostUS {
		t.Errorf("profile's mla_decode %+v (present %v): want the fit with its floor", e, ok)
	}
	// The GPU time under the floor, where the rows show only the host: it
	// is extrapolated from the rows above it, so only roughly (the launch
	// and the memory curve's half trade off there): within a tenth of the
	// floor (10 us), where charging the floor would add 40-85 us.
	e := f.Efficiency
	e.BenchHostUS = 0
	fam, _ := mlaModuleFamily(k.MLAGeneration, g, base, pr)
	for i, s := range fam.samples {
		if gpu[i] >= hostUS*1e-6 {
			continue
		}
		if diff := math.Abs(s.Predict(e) - gpu[i]); diff > 0.1*hostUS*1e-6 {
			t.Errorf("row %d (under the floor): GPU time %.3g s, truth %.3g s (%.1f us apart)", i, s.Predict(e), gpu[i], diff*1e6)
		}
	}
}
