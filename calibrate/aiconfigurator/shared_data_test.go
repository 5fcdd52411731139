package aiconfigurator

import (
	"github.com/roofsim/roofsim/internal/shareddata"

	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
)

// kernelsDir is shared/data/kernels/<gpu> (see shareddata).
func kernelsDir(t testing.TB, gpu string) string { return shareddata.Path(t, "kernels", gpu) }

// TestShippedProfileOnSharedData checks the embedded H100 profile on a
// subsample of the measured H100 decode-attention table: the shipped fit
// must predict it with a median error in line with its calibration report,
// (through kernels.Validate, the path of sim validate kernels), and decode
// latency must grow with the attended length (ISL + step).
func TestShippedProfileOnSharedData(t *testing.T) {
	dir := kernelsDir(t, "h100_sxm")
	f, err := os.Open(filepath.Join(dir, FileGenerationAttention))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseGenerationAttention(f, FileGenerationAttention)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	p := g.EffectiveProfile()
	if !p.Calibrated {
		t.Fatalf("the shipped h100 profile is not calibrated (provenance %q): hardware/profiles/h100.yaml must ship a fitted profile", p.Summary())
	}
	var sub []kernels.GenerationAttentionRow
	for i := 0; i < len(rows); i += 10 {
		sub = append(sub, rows[i])
	}
	rep, err := kernels.Validate(g, kernels.TablesSource{T: &kernels.Tables{GenerationAttention: sub}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Families) != 1 || rep.Families[0].Family != kernels.FamilyAttentionDecode {
		t.Fatalf("families %+v, want attention_decode alone", rep.Families)
	}
	if st := rep.Families[0]; st.N != len(sub) || st.MedianAPE > 35 {
		t.Errorf("shipped h100 decode-attention median APE %.1f%% on %d of every 10th row, want <= 35%%", st.MedianAPE, st.N)
	}
	// Physics: at fixed batch/heads/isl, the largest step is slower than
	// the smallest.
	type key struct {
		b, isl, h, kvh int
		kv             string
	}
	lo, hi := map[key]kernels.GenerationAttentionRow{}, map[key]kernels.GenerationAttentionRow{}
	for _, r := range rows {
		k := key{r.Batch, r.ISL, r.Heads, r.KVHeads, r.KVDtype}
		if l, ok := lo[k]; !ok || r.Step < l.Step {
			lo[k] = r
		}
		if h, ok := hi[k]; !ok || r.Step > h.Step {
			hi[k] = r
		}
	}
	slower, total := 0, 0
	for k, l := range lo {
		if h := hi[k]; h.Step >= 64*max(l.Step, 1) && h.Step > 1000 {
			total++
			if h.LatencyMS > l.LatencyMS {
				slower++
			}
		}
	}
	if total > 0 && slower*10 < total*9 {
		t.Errorf("only %d of %d groups get slower with many more steps: step does not add to the KV length?", slower, total)
	}
}
