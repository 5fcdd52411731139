package kernels

import (
	"math"
	"reflect"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// synthMoERows are balanced bf16 rows of one expert shape over decode and
// prefill token counts, timed by entry e (fusedMoESeconds).
func synthMoERows(t *testing.T, g *hardware.GPU, hidden, inter, topK, experts, tp int, e hardware.OpEfficiency) []MoERow {
	t.Helper()
	peak, _ := g.PeakFLOPS("bf16")
	var rows []MoERow
	for _, T := range []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384} {
		r := MoERow{Dtype: "bfloat16", Tokens: T, Hidden: hidden, Inter: inter, TopK: topK, Experts: experts, TPSize: tp, EPSize: 1, Distribution: "balanced"}
		rt := BalancedRouting(T, experts, topK, 1)
		c := FusedMoECost(r, rt)
		r.LatencyMS = fusedMoESeconds(c, roofline.TokensPerExpert(rt.Pairs, rt.Touched), e, peak, g.BandwidthBytesPerSec()) * 1e3
		rows = append(rows, r)
	}
	return rows
}

// TestFitMoEShapes: two expert shapes whose kernels run at different
// ceilings (a tuned tile configuration against a default one) cannot share
// one curve; each shape's own entry reproduces its rows, is kept, and is
// what a step model of that shape reads (hardware.FusedMoE.LookupShape).
// Rows of an expert-parallel layout get no shape entry.
func TestFitMoEShapes(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	fast := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 64, Exp: 1}, Memory: hardware.Curve{Max: 0.88, Half: 2e7, Exp: 1}, LaunchUS: 20}
	slow := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.2, Half: 128, Exp: 1}, Memory: hardware.Curve{Max: 0.7, Half: 5e7, Exp: 1}, LaunchUS: 40}
	rows := append(synthMoERows(t, g, 4096, 14336, 2, 8, 2, fast), synthMoERows(t, g, 2048, 768, 8, 128, 1, slow)...)
	// Rows of an EP layout inform the format curve but get no entry.
	for _, r := range synthMoERows(t, g, 2048, 768, 8, 128, 1, slow) {
		r.EPSize = 2
		rows = append(rows, r)
	}
	opts := DefaultOptions()
	opts.GPU, opts.MoEPerShape, opts.Restarts = g, true, 4
	res, err := CalibrateMoE(TablesSource{T: &Tables{Dir: "synthetic", MoE: rows}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.MoEShapes) != 2 {
		t.Fatalf("%d shape fits, want 2: %+v", len(res.MoEShapes), res.MoEShapes)
	}
	wantKeys := map[string]hardware.FusedMoEShape{
		"bf16@4096x7168x2x8/ep1":  {Hidden: 4096, Inter: 7168, TopK: 2, Experts: 8, EP: 1},
		"bf16@2048x768x8x128/ep1": {Hidden: 2048, Inter: 768, TopK: 8, Experts: 128, EP: 1},
	}
	for _, f := range res.MoEShapes {
		s, ok := wantKeys[f.Key]
		if !ok {
			t.Errorf("unexpected shape entry %q", f.Key)
			continue
		}
		if !f.Kept {
			t.Errorf("%s: not kept (held-out median %.2f%%, format curve %.2f%%)", f.Key, f.Holdout.MedianAPE, f.Generic.MedianAPE)
		}
		e, key, ok := res.Profile.FusedMoE.LookupShape("bf16", s)
		if !ok || key != f.Key {
			t.Fatalf("LookupShape(bf16, %+v) = %q, want %q", s, key, f.Key)
		}
		// The entry reproduces its own shape's rows.
		var worst float64
		for _, r := range rows {
			if moeShapeOf(r) != s {
				continue
			}
			fams, _ := moeFamilies(&Tables{MoE: []MoERow{r}}, g)
			smp := fams[0].samples[0]
			smp.L2Bytes = 0
			worst = math.Max(worst, math.Abs(smp.Predict(e)/smp.Seconds-1))
		}
		if worst > 0.05 {
			t.Errorf("%s: worst error on its own rows %.1f%%, want <= 5%%", f.Key, worst*100)
		}
	}
	// A shape the table did not measure reads the per-format curve.
	if _, key, _ := res.Profile.FusedMoE.LookupShape("bf16", hardware.FusedMoEShape{Hidden: 4096, Inter: 14336, TopK: 2, Experts: 8, EP: 1}); key != "bf16" {
		t.Errorf("unmeasured shape reads %q, want the bf16 curve", key)
	}
}

// TestCalibrateMoEShapesOnly: with MoEShapesOnly the GPU profile's own
// per-format curves are kept exactly, the earlier shape entries are
// replaced by this fit's, and no per-format family is fitted.
func TestCalibrateMoEShapesOnly(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	fast := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.6, Half: 64, Exp: 1}, Memory: hardware.Curve{Max: 0.88, Half: 2e7, Exp: 1}, LaunchUS: 20}
	opts := DefaultOptions()
	opts.GPU, opts.MoEPerShape, opts.MoEShapesOnly, opts.Restarts = g, true, true, 4
	res, err := CalibrateMoE(TablesSource{T: &Tables{Dir: "synthetic", MoE: synthMoERows(t, g, 4096, 14336, 2, 8, 2, fast)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := g.EffectiveProfile().FusedMoE.SplitShapes()
	got, shapes := res.Profile.FusedMoE.SplitShapes()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("per-format curves changed:\n got %+v\nwant %+v", got, want)
	}
	if len(res.Families) != 0 || len(res.MoEShapes) != 1 || len(shapes) != 1 || shapes["bf16@4096x7168x2x8/ep1"] == (hardware.OpEfficiency{}) {
		t.Errorf("families %d, shape fits %d, shape entries %v: want 0, 1 and the one fitted", len(res.Families), len(res.MoEShapes), shapes)
	}
}
