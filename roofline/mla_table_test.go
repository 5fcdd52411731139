package roofline_test

import (
	"sort"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/roofsim/roofsim/roofline"
)

// mlaGenRow is one row of AIConfigurator's generation_mla_perf table: one
// MLA decode kernel call over batch requests at KV length isl + step, with
// num_heads heads on the GPU; latency in ms.
type mlaGenRow struct {
	KVDtype string  `parquet:"kv_cache_dtype,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	Batch   int64   `parquet:"batch_size,optional"`
	ISL     int64   `parquet:"isl,optional"`
	Step    int64   `parquet:"step,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// TestMLADecodeAgainstKernelTables compares the absorbed MLA decode
// kernel's price (roofline.MLADecodeAttention at DeepSeek-V3's widths,
// under the shipped profile's decode-attention efficiency with the GEMM's
// compute maximum, as the step model prices it) with AIConfigurator's vLLM
// 0.14.0 generation_mla tables, the release the shipped H100 and H200
// profiles were calibrated for. Rows that read at least 1 GB of latents
// with a bf16 cache are compared (smaller calls sit on the module
// benchmark's ~0.15 ms per-call floor). The H200 table was looked at when
// choosing the compute efficiency (training); the H100 table is its check.
// The medians of predicted/measured must lie in [0.8, 1.1].
func TestMLADecodeAgainstKernelTables(t *testing.T) {
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	d := roofline.MLADims{KVLoRA: 512, Nope: 128, Rope: 64, V: 128}
	for _, gpu := range []string{"h100", "h200"} {
		path := shareddata.Path(t, "aic", "systems", "data", gpu+"_sxm", "mla", "vllm", "0.14.0", "generation_mla_perf.parquet")
		rows, err := parquet.ReadFile[mlaGenRow](path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := hardware.Lookup(gpu)
		if err != nil {
			t.Fatal(err)
		}
		p := g.EffectiveProfile()
		e := roofline.MLADecodeEfficiency(p, p.GEMMFor("bf16"))
		peak, _ := g.PeakFLOPS("bf16")
		var ratios []float64
		for _, r := range rows {
			if r.KVDtype != "bfloat16" || r.Latency <= 0 {
				continue
			}
			c := roofline.MLADecodeAttention(float64(r.Batch*(r.ISL+r.Step)), int(r.Batch), int(r.Heads), d, bf16, bf16)
			if c.Bytes() < 1e9 {
				continue
			}
			ratios = append(ratios, roofline.BatchedOpSeconds(c, int(r.Batch), e, peak, g.BandwidthBytesPerSec())/(r.Latency*1e-3))
		}
		if len(ratios) < 100 {
			t.Fatalf("%s: only %d rows", gpu, len(ratios))
		}
		sort.Float64s(ratios)
		med := ratios[len(ratios)/2]
		t.Logf("%s: %d rows, predicted/measured p10 %.2f median %.2f p90 %.2f", gpu, len(ratios),
			ratios[len(ratios)/10], med, ratios[len(ratios)*9/10])
		if med < 0.8 || med > 1.1 {
			t.Errorf("%s: median predicted/measured %.2f, want within [0.8, 1.1]", gpu, med)
		}
	}
}
