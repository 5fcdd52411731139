package roofline

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
)

// Bound labels.
const (
	MemoryBound  = "memory-bound"
	ComputeBound = "compute-bound"
)

// Analysis is the roofline verdict for one operator (or one phase) against
// a peak FLOP rate and a bandwidth. Units: FLOPs, bytes, FLOP/byte, FLOP/s,
// seconds, percent. The measured fields are nil unless WithMeasured was
// applied, and are then absent from JSON.
type Analysis struct {
	Name  string  `json:"name"`
	FLOPs float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
	// ArithmeticIntensity is FLOPs/Bytes in FLOP/byte (0 when Bytes is 0).
	ArithmeticIntensity float64 `json:"arithmetic_intensity"`
	// RidgePoint is peak/bandwidth in FLOP/byte: the intensity where the
	// memory roof meets the compute roof.
	RidgePoint float64 `json:"ridge_point"`
	// AttainableFLOPS is min(peak, intensity x bandwidth) in FLOP/s.
	AttainableFLOPS float64 `json:"attainable_flops"`
	// Bound is MemoryBound or ComputeBound.
	Bound string `json:"bound"`
	// EfficiencyPct is AttainableFLOPS / peak x 100.
	EfficiencyPct float64 `json:"efficiency_pct"`
	// TimeS is max(ComputeTimeS, MemoryTimeS).
	TimeS        float64 `json:"time_s"`
	ComputeTimeS float64 `json:"compute_time_s"`
	MemoryTimeS  float64 `json:"memory_time_s"`

	MeasuredTimeS     *float64 `json:"measured_time_s,omitempty"`
	AchievedFLOPS     *float64 `json:"achieved_flops,omitempty"`
	AchievedBandwidth *float64 `json:"achieved_bandwidth,omitempty"`
	UtilizationPct    *float64 `json:"utilization_pct,omitempty"`
	ErrorPct          *float64 `json:"error_pct,omitempty"`
}

// Analyze is the pure roofline of c against peakFLOPS (FLOP/s) and
// bandwidthBytesPerSec (bytes/s), both > 0:
//
//	ridge      = peak / bw
//	attainable = min(peak, AI x bw)
//	time       = max(FLOPs/peak, Bytes/bw)
//
// The op is memory-bound when AI < ridge; exactly at the ridge the two
// times are equal and it is reported compute-bound. A cost with FLOPs but
// no bytes has unbounded intensity: it is compute-bound, attains the peak,
// and reports intensity 0 (JSON cannot carry +Inf).
func Analyze(c Cost, peakFLOPS, bandwidthBytesPerSec float64) Analysis {
	b := c.Bytes()
	a := Analysis{
		Name:         c.Name,
		FLOPs:        c.FLOPs,
		Bytes:        b,
		RidgePoint:   peakFLOPS / bandwidthBytesPerSec,
		ComputeTimeS: c.FLOPs / peakFLOPS,
		MemoryTimeS:  b / bandwidthBytesPerSec,
	}
	a.TimeS = max(a.ComputeTimeS, a.MemoryTimeS)
	switch {
	case b > 0:
		a.ArithmeticIntensity = c.FLOPs / b
		a.AttainableFLOPS = min(peakFLOPS, a.ArithmeticIntensity*bandwidthBytesPerSec)
		if a.ArithmeticIntensity < a.RidgePoint {
			a.Bound = MemoryBound
		} else {
			a.Bound = ComputeBound
		}
	case c.FLOPs > 0:
		a.AttainableFLOPS = peakFLOPS
		a.Bound = ComputeBound
	default:
		a.Bound = MemoryBound
	}
	a.EfficiencyPct = a.AttainableFLOPS / peakFLOPS * 100
	return a
}

// WithMeasured returns a copy of a annotated with a measured time in
// seconds:
//
//	achieved_flops     = FLOPs / measured
//	achieved_bandwidth = Bytes / measured
//	utilization_pct    = achieved_flops / attainable_flops x 100
//	                     (the share of the roofline reached, whichever roof
//	                     applies: for a memory-bound op it equals the
//	                     fraction of bandwidth achieved)
//	error_pct          = (time_s - measured) / measured x 100
//	                     (positive: the roofline predicts slower)
//
// A non-positive or NaN measurement leaves a unchanged.
func (a Analysis) WithMeasured(seconds float64) Analysis {
	if !(seconds > 0) {
		return a
	}
	m := seconds
	af := a.FLOPs / seconds
	ab := a.Bytes / seconds
	var util float64
	if a.AttainableFLOPS > 0 {
		util = af / a.AttainableFLOPS * 100
	}
	e := (a.TimeS - seconds) / seconds * 100
	a.MeasuredTimeS, a.AchievedFLOPS, a.AchievedBandwidth, a.UtilizationPct, a.ErrorPct = &m, &af, &ab, &util, &e
	return a
}

// AnalyzeOnGPU analyses c against g's nominal peak for c.ComputePrecision
// and g's memory bandwidth; all-reduce costs use the interconnect
// bandwidth instead. It fails when g lacks the precision or the bandwidth.
func AnalyzeOnGPU(c Cost, g *hardware.GPU) (Analysis, error) {
	if g == nil {
		return Analysis{}, fmt.Errorf("analyze %s: gpu is nil", c.Name)
	}
	if c.ComputePrecision == "" {
		return Analysis{}, fmt.Errorf("analyze %s: cost has no compute precision", c.Name)
	}
	peak, ok := g.PeakFLOPS(c.ComputePrecision)
	if !ok {
		return Analysis{}, fmt.Errorf("gpu %s has no %s peak", g.Name, c.ComputePrecision)
	}
	bw, what := g.BandwidthBytesPerSec(), "memory_bandwidth_gbps"
	if c.Kind == KindAllReduce {
		bw, what = g.InterconnectBytesPerSec(), "interconnect_gbps"
	}
	if !(bw > 0) {
		return Analysis{}, fmt.Errorf("gpu %s: %s: must be > 0 to analyze %s", g.Name, what, c.Name)
	}
	return Analyze(c, peak, bw), nil
}
