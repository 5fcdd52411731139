package aiconfigurator

import (
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
	// Releases before any MLA module table are noted, not an error.
	k, rep, err := ReadAICMixers(db, "a100_sxm", aic.Release{0, 24, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.MLAContext) != 0 || len(rep.Notes) == 0 {
		t.Errorf("a100 0.24.0: %d context rows, notes %v; want none and a note", len(k.MLAContext), rep.Notes)
	}
}
