package traces

import (
	"math"
	"testing"
)

// TestRunProfileConserves: the binned series keep every request-second and
// every output token however often the bins were merged, and the number of
// bins stays bounded.
func TestRunProfileConserves(t *testing.T) {
	p := NewRunProfile()
	var running, waiting, tokens float64
	recs := testRequests(20000)
	for i := range recs {
		r := &recs[i]
		// Stretch the times so the bins merge many times (up to ~6000 s).
		for _, x := range []*float64{&r.ArrivalS, &r.FirstScheduledS, &r.FirstTokenS, &r.FinishS} {
			*x *= 30
		}
		p.AddRequest(r)
		if r.Status == StatusOK {
			running += r.FinishS - r.FirstScheduledS
			waiting += r.FirstScheduledS - r.ArrivalS
			tokens += float64(r.OutputTokens)
		}
	}
	ts := p.TimeSeries()
	sum := func(name string) float64 {
		s := ts[name]
		tot := 0.0
		for _, y := range s.Y {
			tot += y * p.width
		}
		return tot
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"running", sum("running"), running}, {"waiting", sum("waiting"), waiting}, {"output tokens", sum("output_tok_s"), tokens}} {
		if math.Abs(c.got-c.want) > 1e-6*c.want {
			t.Errorf("%s: binned total %v, records' total %v", c.name, c.got, c.want)
		}
	}
	if n := len(ts["running"].X); n > profileBins || n < profileBins/4 {
		t.Errorf("%d bins", n)
	}
	if p.TTFT.Count() == 0 || p.Requests != int64(len(recs)) {
		t.Errorf("requests %d, ttft count %d", p.Requests, p.TTFT.Count())
	}
}

func TestRunProfileStepSplit(t *testing.T) {
	p := NewRunProfile()
	p.AddStep(&StepRecord{TimeS: 0, DurationS: 0.01, PrefillTokens: 100, KVBlocksUsed: 10, ComputeS: 0.008, OverheadS: 0.002})
	p.AddStep(&StepRecord{TimeS: 0.01, DurationS: 0.02, DecodeRequests: 4, KVBlocksUsed: 30, MemoryS: 0.015, OverheadS: 0.005})
	p.AddStep(&StepRecord{TimeS: 0.03, DurationS: 0.02, DecodeRequests: 4, PrefillTokens: 5, KVBlocksUsed: 30, ComputeS: 0.02})
	if s := p.Split[PhasePrefill]; s == nil || s.Compute != 0.008 || s.Overhead != 0.002 {
		t.Errorf("prefill %+v", s)
	}
	if s := p.Split[PhaseDecode]; s == nil || s.Memory != 0.015 {
		t.Errorf("decode %+v", s)
	}
	if s := p.Split[PhaseMixed]; s == nil || s.Compute != 0.02 {
		t.Errorf("mixed %+v", s)
	}
	kv := p.TimeSeries()["kv_blocks"]
	// Bins are 10 ms: the first holds the 10-block step, the next four the
	// 30-block steps.
	if len(kv.Y) != 5 || math.Abs(kv.Y[0]-10) > 1e-9 || math.Abs(kv.Y[1]-30) > 1e-9 {
		t.Errorf("kv series %v", kv.Y)
	}
}
