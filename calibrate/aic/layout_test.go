package aic

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type gemmRow struct {
	Dtype   string  `parquet:"gemm_dtype"`
	M       int64   `parquet:"m"`
	Latency float64 `parquet:"latency"`
}

// tree builds a database: system s with gemm tables of their own at 0.14.0
// and 0.24.0, 0.22.0 reusing 0.24.0, a 0.23.0 directory with nothing, an
// NCCL table and systems/s.yaml naming its version.
func tree(t *testing.T) *DB {
	t.Helper()
	root := t.TempDir()
	put := func(rel string, data []byte) {
		p := filepath.Join(root, "systems", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	table := func(rel string, rows ...gemmRow) {
		p := filepath.Join(root, "systems", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := parquet.WriteFile(p, rows); err != nil {
			t.Fatal(err)
		}
	}
	table("data/s/gemm/vllm/0.14.0/gemm_perf.parquet", gemmRow{"fp8", 1, 0.5}, gemmRow{"bfloat16", 2, 0.25})
	table("data/s/gemm/vllm/0.24.0/gemm_perf.parquet", gemmRow{"fp8", 4, 0.125})
	put("data/s/gemm/vllm/0.22.0/reuse.yaml", []byte("schema_version: 1\nreuse:\n- table: gemm_perf\n  from_version: 0.24.0\n"))
	put("data/s/gemm/vllm/0.23.0/collection_meta.yaml", []byte("schema_version: 1\n"))
	put("data/s/gemm/vllm/0.1.dev5/collection_meta.yaml", []byte("schema_version: 1\n"))
	table("data/s/comm/nccl/2.27.3/nccl_perf.parquet", gemmRow{"half", 1, 1})
	table("data/s/comm/nccl/2.29.2/nccl_perf.parquet", gemmRow{"half", 1, 1})
	put("s.yaml", []byte("misc:\n  nccl_version: '2.27.3'\n"))
	db, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestResolve(t *testing.T) {
	db := tree(t)
	rels, err := db.Releases("s", "gemm")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rels); got != 4 || rels[0] != (Release{0, 14, 0}) || rels[3] != (Release{0, 24, 0}) {
		t.Fatalf("releases %v, want 0.14.0 0.22.0 0.23.0 0.24.0 (the dev build left out)", rels)
	}
	for _, c := range []struct {
		want, read string
		notes      int
	}{
		{"0.14.0", "0.14.0", 0},
		{"0.19.0", "0.14.0", 1}, // no directory: nearest earlier
		{"0.22.0", "0.24.0", 1}, // reuse.yaml
		{"0.23.0", "0.24.0", 2}, // nothing of its own: 0.22.0, which reuses 0.24.0
		{"0.24.0", "0.24.0", 0},
		{"0.30.0", "0.24.0", 1},
	} {
		r, _ := ParseRelease(c.want)
		ref, err := db.Resolve("s", TableGEMM, r)
		if err != nil {
			t.Errorf("%s: %v", c.want, err)
			continue
		}
		if ref.Release.String() != c.read || len(ref.Notes) != c.notes || !strings.HasSuffix(ref.Path, filepath.Join(c.read, "gemm_perf.parquet")) {
			t.Errorf("%s: read %s (%s), notes %q; want %s with %d notes", c.want, ref.Release, ref.Path, ref.Notes, c.read, c.notes)
		}
	}
	_, err = db.Resolve("s", TableGEMM, Release{0, 13, 0})
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(nf.Error(), "0.14.0") {
		t.Errorf("0.13.0: %v, want a *NotFoundError listing the releases", err)
	}
	if _, err = db.Resolve("x", TableGEMM, Release{0, 14, 0}); !errors.As(err, &nf) || nf.What != "system" {
		t.Errorf("unknown system: %v", err)
	}
}

func TestNCCLAndReadTable(t *testing.T) {
	db := tree(t)
	path, ver, notes, err := db.NCCL("s")
	if err != nil || ver != "2.27.3" || len(notes) != 0 {
		t.Fatalf("NCCL: %s %s %q %v; want 2.27.3 from s.yaml", path, ver, notes, err)
	}
	ref, err := db.Resolve("s", TableGEMM, Release{0, 14, 0})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadTable(ref.Path)
	if err != nil {
		t.Fatal(err)
	}
	if rows.Len() != 2 || len(rows.SHA256) != 64 {
		t.Fatalf("rows %d sha %q", rows.Len(), rows.SHA256)
	}
	m, err1 := rows.Int(1, "m")
	lat, err2 := rows.Float(0, "latency")
	d, err3 := rows.String(1, "gemm_dtype")
	if m != 2 || lat != 0.5 || d != "bfloat16" || err1 != nil || err2 != nil || err3 != nil {
		t.Errorf("values %d %g %q (%v %v %v)", m, lat, d, err1, err2, err3)
	}
	var ce *ColumnError
	if _, err := rows.Int(0, "n"); !errors.As(err, &ce) || ce.Column != "n" {
		t.Errorf("missing column: %v", err)
	}
	if _, err := rows.Int(0, "gemm_dtype"); !errors.As(err, &ce) || ce.Row != 1 {
		t.Errorf("text as int: %v", err)
	}
}

func TestParseRelease(t *testing.T) {
	for s, ok := range map[string]bool{"0.19.0": true, "0.19": true, "1.2.3.4": false, "0.1.dev5": false, "v0.19.0": false, "0.019.0": false, "": false} {
		r, err := ParseRelease(s)
		var re *ReleaseError
		if ok != (err == nil) || (!ok && !errors.As(err, &re)) {
			t.Errorf("%q: %v, %v", s, r, err)
		}
	}
	if compareLoose("2.27", "2.27.3") >= 0 || compareLoose("2.29.2", "2.27.3") <= 0 {
		t.Error("compareLoose order")
	}
}
