package aiconfigurator

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/roofsim/roofsim/roofline"
)

// TestMoETableBlockFP8IsTheFusedKernel checks which kernel the block-scaled
// fp8 rows of the measured moe.csv tables timed. The collector calls vLLM's
// fused_experts without allow_deep_gemm (default false), so the rows are
// the Triton fused_moe kernel with 128x128 block scales, not DeepGEMM's
// contiguous grouped GEMM: the fused_moe entry fitted on them must not
// stand in for the DeepGEMM path (roofline/moe_deepgemm.go).
//
// The timings carry the difference. DeepGEMM's path as vLLM 0.11.1-0.14
// runs it multiplies a buffer of DeepGEMMRows rows, the same at one token
// as at the smallest batch that touches every local expert, so its time
// would be about equal at both (the buffer grows by at most 5% between
// them in the groups checked). The fused kernel runs only the touched
// experts' tiles, so one token (k experts) costs a fraction of a batch that
// touches all of them. Every balanced group with at least 32 local experts
// and minWeightBytes of their weights must show that fraction below one
// half (smaller groups are launch-bound on either path).
func TestMoETableBlockFP8IsTheFusedKernel(t *testing.T) {
	const minWeightBytes = 512 << 20
	for _, gpu := range []string{"h100_sxm", "b300_sxm"} {
		t.Run(gpu, func(t *testing.T) {
			f, err := os.Open(filepath.Join(kernelsDir(t, gpu), FileMoE))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := ParseMoE(f, FileMoE)
			if err != nil {
				t.Fatal(err)
			}
			type shape struct{ h, i, k, e, tp, ep int }
			byShape := map[shape]map[int]float64{}
			for _, r := range rows {
				if r.Dtype != "fp8_block" || r.Distribution != "balanced" {
					continue
				}
				s := shape{r.Hidden, r.Inter, r.TopK, r.Experts, r.TPSize, r.EPSize}
				if byShape[s] == nil {
					byShape[s] = map[int]float64{}
				}
				byShape[s][r.Tokens] = r.LatencyMS
			}
			checked := 0
			var ratios []float64
			for s, times := range byShape {
				local := s.e / max(s.ep, 1)
				// Enough expert weight (fp8, gate, up and down) that reading
				// it, not the launches, sets the time once all are touched.
				if weight := float64(local) * 3 * float64(s.h) * float64(s.i/max(s.tp, 1)); local < 32 || weight < minWeightBytes {
					continue
				}
				one, ok := times[1]
				if !ok {
					continue
				}
				// The smallest measured batch whose T k pairs cover every expert.
				all := 0
				for tok := range times {
					if tok*s.k >= s.e && (all == 0 || tok < all) {
						all = tok
					}
				}
				if all == 0 {
					continue
				}
				// Only where the padded buffer barely grows from 1 token to
				// that batch (within 5%) does the comparison tell the paths apart.
				if a, b := roofline.DeepGEMMRows(1, s.k, local), roofline.DeepGEMMRows(all, s.k, local); float64(b) > 1.05*float64(a) {
					continue
				}
				r := one / times[all]
				ratios = append(ratios, r)
				checked++
				if r >= 0.5 {
					t.Errorf("%dx%d top-%d of %d, tp %d ep %d: %.3f ms at 1 token vs %.3f ms at %d tokens (ratio %.2f): "+
						"as flat as DeepGEMM's padded buffer, not the fused kernel", s.h, s.i, s.k, s.e, s.tp, s.ep, one, times[all], all, r)
				}
			}
			if checked < 10 {
				t.Fatalf("only %d fp8_block balanced groups with >= 32 local experts to check, want >= 10", checked)
			}
			sort.Float64s(ratios)
			t.Logf("%d groups: t(1 token)/t(all experts touched) median %.3f, max %.3f", checked, ratios[len(ratios)/2], ratios[len(ratios)-1])
		})
	}
}
