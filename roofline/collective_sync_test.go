package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// The rank-synchronisation wait adds, to a decode step at TP n, one wait per
// collective: 2 per layer of a dense model, each AllReduceSyncUS x E[max of
// n standard normals]. By hand for Llama-3.1-8B (32 layers, 64 collectives)
// with a 3 µs spread: TP 1 nothing, TP 2 64 x 3 µs / sqrt(pi) = 108.3 µs,
// TP 4 64 x 3 µs x 1.029375 = 197.6 µs, TP 8 64 x 3 µs x 1.423600 =
// 273.3 µs; the other operators are unchanged.
func TestAllReduceSyncPerCollective(t *testing.T) {
	want := map[int]float64{1: 0, 2: 64 * 3e-6 / math.Sqrt(math.Pi), 4: 64 * 3e-6 * 1.029375, 8: 64 * 3e-6 * 1.423600}
	in := &StepInput{Decodes: []int{500, 700, 900, 1100}}
	for _, tp := range []int{1, 2, 4, 8} {
		synced := idealProfile()
		synced.AllReduceSyncUS = 3
		with := mustStep(t, llama8b(), withProfile(h100(), synced), StepOptions{TP: tp})
		without := mustStep(t, llama8b(), withProfile(h100(), idealProfile()), StepOptions{TP: tp})
		a, b := with.Cost(in), without.Cost(in)
		if d := a.CommS - b.CommS; math.Abs(d-want[tp]) > 1e-6*want[tp]+1e-12 {
			t.Errorf("tp %d: all-reduce time grew by %.4g s, want %.4g s", tp, d, want[tp])
		}
		if a.ComputeS != b.ComputeS || a.MemoryS != b.MemoryS || a.OverheadS != b.OverheadS {
			t.Errorf("tp %d: the spread moved other operators: %+v vs %+v", tp, a, b)
		}
		var rows, wait float64
		for _, op := range with.Breakdown(in) {
			if op.Kind == KindAllReduce {
				rows += op.Seconds
			}
			if op.Name == "allreduce"+RankWaitSuffix {
				wait += op.Seconds
				if op.FLOPs != 0 || op.Bytes != 0 || op.Count != 64 {
					t.Errorf("tp %d: wait row %+v, want 64 collectives moving nothing", tp, op)
				}
			}
		}
		if math.Abs(rows-a.CommS) > 1e-12 {
			t.Errorf("tp %d: breakdown all-reduce rows sum to %g s, step's CommS %g s", tp, rows, a.CommS)
		}
		// The wait has its own row, so a breakdown shows it apart from the
		// collective's table time.
		if math.Abs(wait-want[tp]) > 1e-6*want[tp]+1e-12 {
			t.Errorf("tp %d: rank-wait row %.4g s, want %.4g s", tp, wait, want[tp])
		}
	}
}

// The wait grows with the group: more GPUs never wait less (the ranks'
// spread is fixed, the last of more arrivals comes later).
func TestAllReduceSyncMonotoneInTP(t *testing.T) {
	p := idealProfile()
	p.AllReduceSyncUS = 2
	prev := -1.0
	for _, tp := range []int{1, 2, 4, 8} {
		m := mustStep(t, llama8b(), withProfile(h100(), p), StepOptions{TP: tp})
		if got := m.eng.allReduceSyncSeconds(tp); !(got > prev) {
			t.Fatalf("tp %d: wait %g s, not above %g s", tp, got, prev)
		} else {
			prev = got
		}
	}
	if got := (&EngineTerms{AllReduceSyncUS: 2}).allReduceSyncSeconds(8); math.Abs(got-2e-6*hardware.ExpectedMaxStdNormal(8)) > 1e-18 {
		t.Errorf("tp 8 wait %g", got)
	}
}
