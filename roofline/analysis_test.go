package roofline

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"testing/quick"
)

func TestAnalyzeHand(t *testing.T) {
	tests := []struct {
		name              string
		flops, bytes      float64
		peak, bw          float64
		ai, ridge, attain float64
		bound             string
		tc, tm            float64
	}{
		// AI 1000 = ridge 1e15/1e12: exactly at the ridge is compute-bound.
		{"at ridge", 1e12, 1e9, 1e15, 1e12, 1000, 1000, 1e15, ComputeBound, 1e-3, 1e-3},
		// AI 10 < 1000: attainable 10 * 1e12 = 1e13 (1% of peak).
		{"memory", 1e10, 1e9, 1e15, 1e12, 10, 1000, 1e13, MemoryBound, 1e-5, 1e-3},
		{"compute", 1e13, 1e9, 1e15, 1e12, 1e4, 1000, 1e15, ComputeBound, 1e-2, 1e-3},
		{"no bytes", 1e9, 0, 1e15, 1e12, 0, 1000, 1e15, ComputeBound, 1e-6, 0},
	}
	for _, tt := range tests {
		a := Analyze(Cost{Name: tt.name, FLOPs: tt.flops, WeightBytes: tt.bytes}, tt.peak, tt.bw)
		if a.ArithmeticIntensity != tt.ai || a.RidgePoint != tt.ridge || a.AttainableFLOPS != tt.attain ||
			a.Bound != tt.bound || !near(a.ComputeTimeS, tt.tc, 1e-12) || !near(a.MemoryTimeS, tt.tm, 1e-12) ||
			a.TimeS != math.Max(a.ComputeTimeS, a.MemoryTimeS) || a.EfficiencyPct != tt.attain/tt.peak*100 {
			t.Errorf("%s: got %+v", tt.name, a)
		}
	}
}

func TestWithMeasured(t *testing.T) {
	a := Analyze(Cost{Name: "x", FLOPs: 1e10, WeightBytes: 1e9}, 1e15, 1e12) // predicted 1 ms, memory-bound
	m := a.WithMeasured(2e-3)
	// achieved 1e10/2e-3 = 5e12 FLOP/s; bandwidth 5e11 B/s; attainable 1e13 -> 50%;
	// error (1e-3 - 2e-3)/2e-3 = -50%.
	if *m.MeasuredTimeS != 2e-3 || *m.AchievedFLOPS != 5e12 || *m.AchievedBandwidth != 5e11 ||
		!near(*m.UtilizationPct, 50, 1e-12) || !near(*m.ErrorPct, -50, 1e-12) {
		t.Errorf("got %+v", m)
	}
	if a.MeasuredTimeS != nil {
		t.Error("WithMeasured modified its receiver")
	}
	if z := a.WithMeasured(0); z.MeasuredTimeS != nil {
		t.Error("non-positive measurement was recorded")
	}
}

func TestAnalysisJSONKeys(t *testing.T) {
	a := Analyze(GEMV(4096, 4096, mustPrec(t, "fp16"), mustPrec(t, "fp16")), 62e12, 287e9)
	keys := func(a Analysis) map[string]any {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := []string{"name", "flops", "bytes", "arithmetic_intensity", "ridge_point", "attainable_flops", "bound",
		"efficiency_pct", "time_s", "compute_time_s", "memory_time_s"}
	measured := []string{"measured_time_s", "achieved_flops", "achieved_bandwidth", "utilization_pct", "error_pct"}
	got := keys(a)
	if len(got) != len(base) {
		t.Errorf("unmeasured JSON has %d keys, want %d: %v", len(got), len(base), got)
	}
	for _, k := range base {
		if _, ok := got[k]; !ok {
			t.Errorf("missing key %q", k)
		}
	}
	got = keys(a.WithMeasured(120e-6))
	for _, k := range append(base, measured...) {
		if _, ok := got[k]; !ok {
			t.Errorf("measured: missing key %q", k)
		}
	}
}

func TestAnalyzeOnGPU(t *testing.T) {
	bf16 := mustPrec(t, "bf16")
	c := GEMM(1, 4096, 4096, bf16, bf16)
	if _, err := AnalyzeOnGPU(c, t4()); err == nil || err.Error() != "gpu t4 has no bf16 peak" {
		t.Errorf("t4 bf16 error = %v", err)
	}
	a, err := AnalyzeOnGPU(c, h100())
	if err != nil {
		t.Fatal(err)
	}
	if a.RidgePoint != 989.4e12/3350e9 {
		t.Errorf("ridge = %v", a.RidgePoint)
	}
	ar := AllReduce(1<<20, 8)
	a, err = AnalyzeOnGPU(ar, h100())
	if err != nil {
		t.Fatal(err)
	}
	// Interconnect bandwidth: 2*7/8*1 MiB / 450 GB/s.
	if !near(a.MemoryTimeS, 2*7.0/8*(1<<20)/450e9, 1e-12) {
		t.Errorf("allreduce memory time = %v", a.MemoryTimeS)
	}
	if _, err := AnalyzeOnGPU(ar, t4()); err == nil || !strings.Contains(err.Error(), "interconnect_gbps") {
		t.Errorf("t4 allreduce error = %v", err)
	}
}

// positive maps an arbitrary float into a sane positive range.
func positive(x float64, lo, hi float64) float64 {
	x = math.Abs(x)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 1
	}
	return lo + math.Mod(x, hi-lo)
}

func TestAnalyzeProperties(t *testing.T) {
	cfg := &quick.Config{MaxCount: 3000}
	gen := func(f, b, p, w float64) (Cost, float64, float64) {
		return Cost{FLOPs: positive(f, 1, 1e15), ActBytes: positive(b, 1, 1e12)}, positive(p, 1e9, 1e16), positive(w, 1e8, 1e13)
	}
	props := map[string]any{
		"attainable <= peak": func(f, b, p, w float64) bool {
			c, peak, bw := gen(f, b, p, w)
			return Analyze(c, peak, bw).AttainableFLOPS <= peak
		},
		"time == max(compute, memory)": func(f, b, p, w float64) bool {
			c, peak, bw := gen(f, b, p, w)
			a := Analyze(c, peak, bw)
			return a.TimeS == math.Max(a.ComputeTimeS, a.MemoryTimeS) && a.ComputeTimeS == c.FLOPs/peak && a.MemoryTimeS == c.Bytes()/bw
		},
		"bound flips exactly at the ridge": func(b, p, w float64, s uint16) bool {
			_, peak, bw := gen(1, b, p, w)
			bytes := positive(b, 1, 1e12)
			ridge := peak / bw
			below := math.Nextafter(ridge*bytes, 0) * (1 - float64(s%100)/1000)
			above := ridge * bytes * (1 + float64(s%100)/1000)
			ab := Analyze(Cost{FLOPs: below, ActBytes: bytes}, peak, bw)
			aa := Analyze(Cost{FLOPs: above, ActBytes: bytes}, peak, bw)
			okBelow := (ab.ArithmeticIntensity < ab.RidgePoint) == (ab.Bound == MemoryBound)
			okAbove := (aa.ArithmeticIntensity < aa.RidgePoint) == (aa.Bound == MemoryBound)
			return okBelow && okAbove && (ab.ArithmeticIntensity >= ridge || ab.Bound == MemoryBound)
		},
		"more bandwidth never slows a memory-bound op": func(f, b, p, w, k float64) bool {
			c, peak, bw := gen(f, b, p, w)
			a := Analyze(c, peak, bw)
			if a.Bound != MemoryBound {
				return true
			}
			return Analyze(c, peak, bw*positive(k, 1, 100)).TimeS <= a.TimeS
		},
	}
	for name, f := range props {
		if err := quick.Check(f, cfg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
