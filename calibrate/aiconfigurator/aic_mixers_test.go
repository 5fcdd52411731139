package aiconfigurator

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestReadAICMixers reads B200's vLLM 0.24.0 token-mixer tables: the MLA
// module tables at DeepSeek-V3's widths, the absorbed path's matmuls with
// the collector's shapes, the GDN rows and the DSA module tables (prefix
// and KV length read from the step column); each file with its rows and
// checksum.
func TestReadAICMixers(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := ReadAICMixers(db, "b200_sxm", aic.Release{0, 24, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Files) != 6 {
		t.Fatalf("read %d files (%v), want mla_bmm, both MLA modules, gdn and both DSA modules", len(k.Files), k.Files)
	}
	for _, f := range k.Files {
		if f.Rows == 0 || len(f.SHA256) != 64 {
			t.Errorf("%s: %d rows, sha256 %q", f.File, f.Rows, f.SHA256)
		}
	}
	if len(k.MLAContext) == 0 || len(k.MLAGeneration) == 0 || len(k.MLABMM) == 0 || len(k.GDN) == 0 {
		t.Fatalf("rows: context %d, generation %d, bmm %d, gdn %d", len(k.MLAContext), len(k.MLAGeneration), len(k.MLABMM), len(k.GDN))
	}
	if w := k.MLAGeneration[0].Widths; w.KVLoRA != 512 || w.Rope != 64 || w.Hidden != 7168 {
		t.Errorf("generation widths %+v, want DeepSeek-V3's", w)
	}
	if len(k.DSAContext) == 0 || len(k.DSAGeneration) == 0 {
		t.Fatalf("rows: dsa context %d, dsa generation %d", len(k.DSAContext), len(k.DSAGeneration))
	}
	prefixes := map[int]bool{}
	for _, r := range k.DSAContext {
		prefixes[r.Prefix] = true
		if r.KVLen != 0 || r.ISL < 1 || r.Widths.IndexTopK != 2048 {
			t.Fatalf("dsa context row %+v", r)
		}
	}
	if !prefixes[0] || !prefixes[128] || len(prefixes) != 2 {
		t.Errorf("dsa context prefixes %v, want 0 and 128", prefixes)
	}
	for _, r := range k.DSAGeneration {
		if r.ISL != 1 || r.Prefix != 0 || r.KVLen < 2 || (r.Widths.IndexHeads != 64 && r.Widths.IndexHeads != 32) {
			t.Fatalf("dsa generation row %+v", r)
		}
	}
	for _, r := range k.MLABMM {
		if (r.Op == "mla_gen_pre" && (r.K != 128 || r.N != 512)) || (r.Op == "mla_gen_post" && (r.K != 512 || r.N != 128)) {
			t.Fatalf("bmm row %+v: wrong shape for its op", r)
		}
	}
	// A release without an MLA module table at or before it reads the
	// kernel-level tables (the backend's forward only), with a note: A100
	// at 0.24.0 has them through 0.22.0's reuse.yaml, from 0.14.0.
	k, rep, err := ReadAICMixers(db, "a100_sxm", aic.Release{0, 24, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.MLAContext) == 0 || !k.MLAContext[0].BackendOnly || len(rep.Notes) == 0 {
		t.Errorf("a100 0.24.0: %d context rows, notes %v; want the kernel-level rows and notes", len(k.MLAContext), rep.Notes)
	}
}

// TestReadAICMixersKernelLevel reads H100's vLLM 0.14.0 MLA tables, the
// earlier kernel-level layout (context_mla_perf, generation_mla_perf): the
// attention backend's forward at DeepSeek-V3's widths, num_heads per GPU
// (128 over tp_size), generation rows decoding one token over step keys;
// the release has no mla_bmm, linear_attention or sparse_attention table,
// and the notes say so.
func TestReadAICMixersKernelLevel(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	k, rep, err := ReadAICMixers(db, "h100_sxm", aic.Release{0, 14, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Files) != 2 || k.Files[0].File != "data/h100_sxm/mla/vllm/0.14.0/context_mla_perf.parquet" || k.Files[0].Rows != 3165 || k.Files[1].Rows != 5430 {
		t.Fatalf("files %+v, want the two kernel-level MLA tables (3165 and 5430 rows)", k.Files)
	}
	if len(k.MLABMM) != 0 || len(k.GDN) != 0 || len(k.DSAContext) != 0 {
		t.Errorf("rows: bmm %d, gdn %d, dsa %d; want none at 0.14.0", len(k.MLABMM), len(k.GDN), len(k.DSAContext))
	}
	heads := map[int]bool{}
	for _, r := range append(k.MLAContext, k.MLAGeneration...) {
		heads[r.Heads] = true
		if !r.BackendOnly || r.GEMMType != "bfloat16" || r.Widths.KVLoRA != 512 || r.Widths.V != 128 {
			t.Fatalf("row %+v: want a backend-only row at DeepSeek-V3's widths", r)
		}
	}
	if len(heads) != 8 || !heads[1] || !heads[128] {
		t.Errorf("heads per GPU %v, want 1 ... 128", heads)
	}
	for _, r := range k.MLAGeneration {
		if r.ISL != 1 || r.Step < 1 {
			t.Fatalf("generation row %+v: want isl 1 and a step", r)
		}
	}
	var kernelLevel, absent int
	for _, n := range rep.Notes {
		if strings.Contains(n, "kernel-level") {
			kernelLevel++
		}
		if strings.Contains(n, "not read") {
			absent++
		}
	}
	if kernelLevel != 2 || absent != 4 {
		t.Errorf("notes %q: want 2 kernel-level and 4 absent tables", rep.Notes)
	}
}
