package aiconfigurator

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// withoutLines returns rows with Line zeroed: the CSV counts file lines
// (header = 1), the Parquet reader rows (from 1).
func withoutLines[T any](rows []T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		v := reflect.ValueOf(&r).Elem()
		if f := v.FieldByName("Line"); f.IsValid() {
			f.SetInt(0)
		}
		out[i] = r
	}
	return out
}

// sameRows reports the first difference of two row lists, or "".
func sameRows[T any](name string, csv, pq []T) string {
	a, b := withoutLines(csv), withoutLines(pq)
	if len(a) != len(b) {
		return fmt.Sprintf("%s: %d CSV rows, %d Parquet rows", name, len(a), len(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("%s row %d: CSV %+v, Parquet %+v", name, i+1, a[i], b[i])
		}
	}
	return ""
}

// TestAICEqualsCSVConversion reads the H100 vLLM 0.14.0 tables from the
// AIConfigurator database (Parquet, resolved by release) and from the CSV
// conversions in shared/data/kernels/h100_sxm: they must be the same rows
// in the same order, table by table. The NCCL table is the version that
// systems/h100_sxm.yaml names (2.27.3), which the CSV was converted from
// (its rows' version column reads 2.29.2 in both).
func TestAICEqualsCSVConversion(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	csv, err := ReadKernels(kernelsDir(t, "h100_sxm"))
	if err != nil {
		t.Fatal(err)
	}
	pq, rep, err := ReadAIC(db, "h100_sxm", aic.Release{0, 14, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes on 0.14.0, want none (every table its own, one kernel source per dtype): %q", rep.Notes)
	}
	if rep.NCCL != "2.27.3" {
		t.Errorf("NCCL version %q, want 2.27.3 (systems/h100_sxm.yaml misc.nccl_version)", rep.NCCL)
	}
	for _, d := range []string{
		sameRows("gemm", csv.GEMM, pq.GEMM),
		sameRows("context_attention", csv.ContextAttention, pq.ContextAttention),
		sameRows("generation_attention", csv.GenerationAttention, pq.GenerationAttention),
		sameRows("custom_allreduce", csv.CustomAllReduce, pq.CustomAllReduce),
		sameRows("nccl", csv.NCCL, pq.NCCL),
		sameRows("moe", csv.MoE, pq.MoE),
	} {
		if d != "" {
			t.Error(d)
		}
	}
	if len(pq.Files) != 6 {
		t.Fatalf("files %+v, want 6", pq.Files)
	}
	for i, f := range pq.Files {
		if f.SHA256 == "" || f.Rows != csv.Files[i].Rows || !strings.HasSuffix(f.File, ".parquet") {
			t.Errorf("file %d: %+v (CSV %+v)", i, f, csv.Files[i])
		}
	}
}

// TestAICResolvesEveryGPU resolves the fitted tables of every system and
// release the database holds: each system maps to a catalog GPU, and every
// release resolves its required tables (its own, reused or an earlier one).
func TestAICResolvesEveryGPU(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	systems, err := db.SystemNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(systems) < 7 {
		t.Fatalf("systems %v, want the 7 of the README", systems)
	}
	for _, s := range systems {
		g, err := hardware.Lookup(s)
		if err != nil {
			t.Errorf("system %s: no catalog GPU: %v", s, err)
			continue
		}
		if got, err := SystemOf(db, g); err != nil || got != s {
			t.Errorf("SystemOf(%s) = %q, %v; want %s", g.Name, got, err, s)
		}
		rels, err := db.Releases(s, aic.TableGEMM.Family())
		if err != nil || len(rels) == 0 {
			t.Errorf("%s: gemm releases %v, %v", s, rels, err)
			continue
		}
		for _, r := range rels {
			for _, tb := range []aic.Table{aic.TableGEMM, aic.TableContextAttention, aic.TableGenerationAttention} {
				ref, err := db.Resolve(s, tb, r)
				if err != nil {
					t.Errorf("%s %s %s: %v", s, tb, r, err)
				} else if ref.Release.Compare(r) > 0 && len(ref.Notes) == 0 {
					t.Errorf("%s %s %s: read %s without a note", s, tb, r, ref.Release)
				}
			}
		}
	}
}

var _ kernels.Source = AIC{}
