package table

import (
	"errors"
	"strings"
	"testing"
)

type row struct {
	M       int
	Dtype   string
	Latency float64
}

func readRows(in string, o Options) ([]row, error) {
	return ReadAll(strings.NewReader(in), "g.csv", o, func(t *Reader) row {
		return row{M: t.IntMin("m", 1), Dtype: t.Text("dtype"), Latency: t.Positive("latency")}
	})
}

var req = Options{Required: []string{"m", "dtype", "latency"}}

func TestReadsByHeaderName(t *testing.T) {
	in := "\ufefflatency, m ,extra,dtype\n0.5,128.0,x, bf16 \n1e-3,3,,fp8\n"
	rows, err := readRows(in, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []row{{128, "bf16", 0.5}, {3, "fp8", 1e-3}}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

func TestErrorsNameFileLineColumn(t *testing.T) {
	const h = "m,dtype,latency\n"
	tests := []struct {
		name, in string
		o        Options
		want     string
	}{
		{"not an integer", h + "1,bf16,1\nabc,bf16,1\n", req, `g.csv:3:1: m: want an integer, got "abc"`},
		{"fraction", h + "1.5,bf16,1\n", req, `g.csv:2:1: m: want an integer, got "1.5"`},
		{"below minimum", h + "0,bf16,1\n", req, `g.csv:2:1: m: must be >= 1, got 0`},
		{"empty text", h + "1, ,1\n", req, `g.csv:2:3: dtype: empty`},
		{"not a number", h + "1,bf16,fast\n", req, `g.csv:2:8: latency: want a finite number, got "fast"`},
		{"infinite", h + "1,bf16,Inf\n", req, `g.csv:2:8: latency: want a finite number, got "Inf"`},
		{"not positive", h + "1,bf16,-2\n", req, `g.csv:2:8: latency: must be > 0, got -2`},
		{"missing column", "m,latency\n", req, `g.csv:1: missing required column "dtype"`},
		{"duplicate column", "m,dtype,latency,m\n", req, `g.csv:1:17: duplicate column "m"`},
		{"unknown column", "m,dtype,latency,color\n", Options{Required: req.Required, Known: []string{"note"}},
			`g.csv:1:17: unknown column "color" (known: m, dtype, latency, note)`},
		{"empty", "", req, "g.csv:1: empty file (want a header row with m, dtype, latency)"},
		{"field count", h + "1,bf16\n", req, "g.csv:2:1: wrong number of fields"},
		{"bare quote", h + "1,b\"f,1\n", req, `g.csv:2:4: bare " in non-quoted-field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readRows(tt.in, tt.o)
			var te *Error
			if !errors.As(err, &te) || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReadAllEmptyAndError(t *testing.T) {
	rows, err := readRows("m,dtype,latency\n", req)
	if err != nil || rows == nil || len(rows) != 0 {
		t.Errorf("header only: rows %#v, err %v; want an empty non-nil slice", rows, err)
	}
	rows, err = readRows("m,dtype,latency\n1,a,1\n0,a,1\n", req)
	if err == nil || rows != nil {
		t.Errorf("bad second row: rows %v, err %v; want nil rows and the error", rows, err)
	}
}

func TestFoldCaseAndEmpty(t *testing.T) {
	rows, err := readRows("M,DType,Latency\n2,bf16,1\n", Options{Required: req.Required, FoldCase: true})
	if err != nil || len(rows) != 1 || rows[0] != (row{2, "bf16", 1}) {
		t.Errorf("folded header: rows %+v, err %v", rows, err)
	}
	if _, err := readRows("M,DType,Latency\n", req); err == nil {
		t.Error("header case differs: want a missing-column error without FoldCase")
	}
	for _, in := range []string{"", "# only\n# comments\n"} {
		if _, err := Open(strings.NewReader(in), "e.csv", Options{Comment: '#'}); !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: err = %v, want ErrEmpty", in, err)
		}
	}
}

func TestCommentsAndRagged(t *testing.T) {
	in := "# a comment\nm,dtype,latency,note\n# another\n4,bf16,2\n"
	rows, err := readRows(in, Options{Required: req.Required, Comment: '#', Ragged: true})
	if err != nil || len(rows) != 1 || rows[0] != (row{4, "bf16", 2}) {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	tb, err := Open(strings.NewReader("a,b\n1\n"), "r.csv", Options{Ragged: true})
	if err != nil {
		t.Fatal(err)
	}
	if !tb.Next() || tb.Raw("a") != "1" || tb.Raw("b") != "" || tb.Str("nope") != "" || !tb.Has("a") || tb.Has("nope") || tb.Line() != 2 {
		t.Errorf("short row: b %q, line %d", tb.Str("b"), tb.Line())
	}
	tb.Failf("b", "needed")
	if got := tb.Err().Error(); got != "r.csv:2: b: needed" {
		t.Errorf("failf on a missing cell: %q", got)
	}
	tb.Failf("a", "second")
	if got := tb.Err().Error(); got != "r.csv:2: b: needed" || tb.Next() {
		t.Errorf("the first error must stick and stop the reader: %q", got)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("m,dtype,latency\n1,bf16,0.1\n"))
	f.Add([]byte("m,dtype,latency\n\"1\",\"a\"\"b\",1e3\n\"x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := readRows(string(data), req)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.File != "g.csv" {
				t.Fatalf("error %v is not a positioned *Error", err)
			}
			return
		}
		for _, r := range rows {
			if r.M < 1 || r.Dtype == "" || !(r.Latency > 0) {
				t.Fatalf("accepted invalid row %+v", r)
			}
		}
	})
}
