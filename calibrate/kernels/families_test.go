package kernels

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// Prefill attention rows with an fp8 KV cache form their own family at the
// fp8 peak; a family with more than MaxImpossibleFraction of its rows
// faster than FLOPs/peak is not fitted, and a few such rows are dropped.
func TestPrefillAttentionFamiliesByKV(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(kv string, n int, scale float64) []ContextAttentionRow {
		var out []ContextAttentionRow
		for i := 0; i < n; i++ {
			isl := 512 * (i + 1)
			r := ContextAttentionRow{Batch: 1, ISL: isl, Heads: 32, KVHeads: 8, HeadDim: 128, AttnDtype: "bfloat16", KVDtype: kv}
			// Causal FLOPs 2*2*isl^2/2*heads*dim at 40% of the bf16 peak, scaled.
			f := 2.0 * float64(isl) * float64(isl) * 32 * 128
			r.LatencyMS = scale * f / (0.4 * 989.4e12) * 1e3
			out = append(out, r)
		}
		return out
	}
	find := func(fams []opFamily, name string) *opFamily {
		for i := range fams {
			if fams[i].name == name {
				return &fams[i]
			}
		}
		return nil
	}
	k := &Tables{ContextAttention: append(rows("bfloat16", 20, 1), rows("fp8", 20, 1)...)}
	fams, warns := families(k, g)
	bf, f8 := find(fams, FamilyAttentionPrefill), find(fams, FamilyAttentionPrefillKVPrefix+"fp8")
	if bf == nil || f8 == nil || len(bf.samples) != 20 || len(f8.samples) != 20 {
		t.Fatalf("families %v, warnings %v: want 20 bf16-KV and 20 fp8-KV prefill rows", fams, warns)
	}
	if pk, _ := g.PeakFLOPS("fp8"); f8.samples[0].PeakFLOPS != pk {
		t.Errorf("fp8-KV sample peak %g, want the fp8 peak %g", f8.samples[0].PeakFLOPS, pk)
	}

	// One fp8-KV row in 20 (5%) twenty times faster, above the fp8 peak: dropped,
	// the family kept.
	odd := rows("fp8", 20, 1)
	odd[19].LatencyMS /= 20
	k = &Tables{ContextAttention: append(rows("bfloat16", 20, 1), odd...)}
	fams, warns = families(k, g)
	if f8 := find(fams, FamilyAttentionPrefillKVPrefix+"fp8"); f8 == nil || len(f8.samples) != 19 {
		t.Errorf("one impossible row: want the family with 19 rows, got %v (warnings %v)", f8, warns)
	}
	// Half the rows impossible: the family is not fitted, with a warning.
	for i := 0; i < 10; i++ {
		odd[i].LatencyMS /= 20
	}
	k = &Tables{ContextAttention: append(rows("bfloat16", 20, 1), odd...)}
	fams, warns = families(k, g)
	if f8 := find(fams, FamilyAttentionPrefillKVPrefix+"fp8"); f8 != nil {
		t.Errorf("11 of 20 impossible rows: family still fitted")
	}
	if !strings.Contains(strings.Join(warns, "\n"), "attention_prefill_kv_fp8: not fitted: 11 of 20 rows") {
		t.Errorf("warnings %q lack the rejection", warns)
	}
}
