package calibrate

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestZZScratchDecode(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	g, _ := hardware.Lookup(os.Getenv("ZZGPU"))
	k, err := ReadKernels("../../shared/data/kernels/" + os.Getenv("ZZDIR"))
	if err != nil {
		t.Fatal(err)
	}
	e := g.EffectiveProfile().AttentionDecode
	fmt.Printf("%+v\n", e)
	type agg struct{ sum []float64 }
	by := map[string][]float64{}
	for _, r := range k.GenerationAttention {
		s, _ := sampleOf(GenerationAttentionCost(r), g, r.LatencyMS)
		p := s.Predict(e)
		key := fmt.Sprintf("b=%4d h=%3d kvh=%2d kv=%s", r.Batch, r.Heads, r.KVHeads, r.KVDtype)
		_ = key
		key2 := fmt.Sprintf("b=%4d", r.Batch)
		by[key2] = append(by[key2], p/s.Seconds)
		key3 := fmt.Sprintf("kvlen~%6d", 1<<uint(log2(r.KVLen())))
		by[key3] = append(by[key3], p/s.Seconds)
		key4 := fmt.Sprintf("h=%3d kvh=%2d", r.Heads, r.KVHeads)
		by[key4] = append(by[key4], p/s.Seconds)
	}
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := by[k]
		sort.Float64s(v)
		fmt.Printf("%s n=%5d ratio p10 %.2f med %.2f p90 %.2f\n", k, len(v), v[len(v)/10], v[len(v)/2], v[len(v)*9/10])
	}
}

func log2(x int) int {
	n := 0
	for x > 1 {
		x >>= 1
		n++
	}
	return n
}
