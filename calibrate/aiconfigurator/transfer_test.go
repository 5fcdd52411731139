package aiconfigurator

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestTransferStatsHand: the statistics of three hand-made pairs, from
// their definitions.
func TestTransferStatsHand(t *testing.T) {
	f := TransferFamily{FamilyPredictions: kernels.FamilyPredictions{Pred: []float64{1.1, 0.8, 1.0}, Meas: []float64{1, 1, 2}}}
	s := f.Stats()
	// |errors| 10, 20, 50 %; signed +10, -20, -50 %.
	if s.N != 3 || math.Abs(s.MedianAPE-20) > 1e-9 || math.Abs(s.P90APE-50) > 1e-9 || math.Abs(s.BiasPct-(-20)) > 1e-9 {
		t.Fatalf("stats %+v, want n 3, median 20, p90 50, bias -20", s)
	}
}

// TestPredictWithMarksTraining: a family is training exactly when one of
// its tables has bytes the profile was fitted on, and its predictions are
// the profile's (kernels.Predictions with the GPU carrying it).
func TestPredictWithMarksTraining(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	k := &kernels.Tables{
		Files: []kernels.FileCount{
			{File: "data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet", SHA256: "aa"},
			{File: "data/h100_sxm/attention/vllm/0.22.0/context_attention_perf.parquet", SHA256: "bb"},
		},
		GEMM:             []kernels.GEMMRow{{M: 64, N: 4096, K: 4096, Dtype: "bfloat16", LatencyMS: 0.1}},
		ContextAttention: []kernels.ContextAttentionRow{{Batch: 1, ISL: 1024, Heads: 32, KVHeads: 8, HeadDim: 128, AttnDtype: "bfloat16", KVDtype: "bfloat16", LatencyMS: 0.2}},
	}
	p := hardware.DefaultProfile()
	fams, err := PredictWith(kernels.Prepare(g, k), p, map[string]bool{"aa": true})
	if err != nil {
		t.Fatal(err)
	}
	gg := g.Clone()
	gg.Profile = p
	want, err := kernels.Predictions(gg, kernels.TablesSource{T: k})
	if err != nil {
		t.Fatal(err)
	}
	training := map[string]bool{}
	for i, f := range fams {
		training[f.Family] = f.Training
		if f.Family != want[i].Family || f.Pred[0] != want[i].Pred[0] || f.Meas[0] != want[i].Meas[0] {
			t.Errorf("%s: %v / %v, want %s %v / %v", f.Family, f.Pred, f.Meas, want[i].Family, want[i].Pred, want[i].Meas)
		}
	}
	if !training["gemm_bf16"] || training["attention_prefill"] || len(fams) != 2 {
		t.Fatalf("training %v, want gemm_bf16 only (of gemm_bf16, attention_prefill)", training)
	}
}

// TestLeaveOut: the hold-out profiles the catalog gives, and that
// choosing them leaves the catalog GPU untouched.
func TestLeaveOut(t *testing.T) {
	at := func(v string) engine.Engine {
		e, err := engine.Parse("vllm@" + v)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	h100, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gpu, rel, want string
		ok             bool
	}{
		{"h100", "0.24.0", "h100 vllm-0.19.0 kernels", true},
		{"h100", "0.14.0", "h100 vllm-0.19.0 kernels", true},
		{"h100", "0.22.0", "h100 vllm-0.19.0 kernels", true}, // no 0.22.0 profile: the one it picks anyway
		{"h200", "0.24.0", "h200 vllm-0.14.0 kernels", true}, // no 0.19.0 file: the single file
		{"a100-80gb", "0.14.0", "", false},                   // its only profile is 0.14.0's
		{"b300", "0.19.0", "b300 vllm-0.24.0 kernels", true},
		{"b300", "0.24.0", "b300 vllm-0.19.0 kernels", true},
	} {
		g, err := hardware.Lookup(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		ch, ok, err := LeaveReleaseOut(g, at(tc.rel))
		if err != nil || ok != tc.ok || (ok && (ch.Label != tc.want || ch.Owner.Name != tc.gpu)) {
			t.Errorf("LeaveReleaseOut(%s, %s) = %q, %v, %v; want %q, %v", tc.gpu, tc.rel, ch.Label, ok, err, tc.want, tc.ok)
		}
	}
	ch, err := LeaveGPUOut(h100, at("0.24.0"))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Owner == nil || ch.Owner.Name == "h100" || ch.Profile.BorrowedFrom != ch.Owner.Name || !strings.HasPrefix(ch.Label, "borrowed:") {
		t.Fatalf("LeaveGPUOut(h100) = %q (owner %v), want a profile borrowed from another Hopper GPU", ch.Label, ch.Owner)
	}
	again, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	if again.Profile == nil || again.Profile.BorrowedFrom != "" || len(again.Releases) == 0 {
		t.Fatal("LeaveGPUOut modified the catalog's h100")
	}
}

// TestFittedTablesSharedData: a profile's training tables include the
// reuse.yaml copies of its release's tables and byte-identical copies in
// other releases, and exclude another release's own tables.
func TestFittedTablesSharedData(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	sha := func(sys string, tb aic.Table, rel string) string {
		r, err := aic.ParseRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := db.Resolve(sys, tb, r)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(ref.Path)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		return hex.EncodeToString(s[:])
	}
	for _, tc := range []struct {
		gpu, profileRel string
		sys             string
		table           aic.Table
		rel             string
		want            bool
	}{
		{"h100", "0.24.0", "h100_sxm", aic.TableGEMM, "0.22.0", true},        // reuse.yaml: 0.22.0 takes 0.24.0's
		{"h100", "0.24.0", "h100_sxm", aic.TableGEMM, "0.19.0", false},       // its own table
		{"h100", "0.14.0", "h100_sxm", aic.TableMoE, "0.14.0", true},         // the single file's CSV conversion
		{"l40s", "0.14.0", "l40s", aic.TableCustomAllReduce, "0.22.0", true}, // a byte-identical copy
		{"l40s", "0.14.0", "l40s", aic.TableGEMM, "0.24.0", false},
		{"h200", "0.14.0", "h100_sxm", aic.TableMoE, "0.14.0", true}, // h200.yaml's fused_moe_from: h100
		{"h200", "0.14.0", "h100_sxm", aic.TableGEMM, "0.14.0", false},
	} {
		g, err := hardware.Lookup(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.Parse("vllm@" + tc.profileRel)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := Pick(g, e)
		if err != nil {
			t.Fatal(err)
		}
		fitted, err := FittedTables(db, ch.Owner, ch.Profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := fitted[sha(tc.sys, tc.table, tc.rel)]; got != tc.want {
			t.Errorf("%s (%s): %s %s fitted = %v, want %v", tc.gpu, ch.Label, tc.table, tc.rel, got, tc.want)
		}
	}
}
