package vidur

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

const header = "n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,num_tokens,num_tensor_parallel_workers," +
	"time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,time_stats.mlp_up_proj.median,time_stats.mlp_down_proj.median\n"

// Llama-3-8B-like shapes at TP 2: head dim 4096/32 = 128, q 16 heads = 2048,
// kv 4 heads = 512 per GPU, gated up projection 2 x 14336/2.
func TestCostsShapes(t *testing.T) {
	r := Row{Heads: 32, KVHeads: 8, Hidden: 4096, Inter: 14336, Gated: true, Tokens: 64, TP: 2}
	c := Costs(r)
	for op, want := range map[string][3]int{
		"attn_pre_proj":  {64, 2048 + 2*512, 4096},
		"attn_post_proj": {64, 4096, 2048},
		"mlp_up_proj":    {64, 14336, 4096},
		"mlp_down_proj":  {64, 4096, 7168},
	} {
		if got := [3]int{c[op].M, c[op].N, c[op].K}; got != want {
			t.Errorf("%s: m, n, k = %v, want %v", op, got, want)
		}
		if f := 2.0 * float64(want[0]*want[1]) * float64(want[2]); c[op].FLOPs != f {
			t.Errorf("%s: FLOPs %g, want 2mnk = %g", op, c[op].FLOPs, f)
		}
	}
}

func TestParseAndValidate(t *testing.T) {
	in := header + "32,8,4096,14336,True,64,2,0.02,0.01,0.05,0.03\n32,8,4096,14336,true,128,1,0.04,0.02,0.1,0.06\n"
	rows, err := ParseMLP(strings.NewReader(in), "m.mlp.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[0].Gated || rows[1].TP != 1 || rows[0].MedianMS["mlp_up_proj"] != 0.05 || rows[1].Line != 3 {
		t.Fatalf("rows %+v", rows)
	}
	path := filepath.Join(t.TempDir(), "m.mlp.csv")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	fr, err := Validate(g, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr) != 4 || fr[0].Family != "vidur:m.mlp.csv:attn_pre_proj" || fr[0].N != 2 || math.IsNaN(fr[0].MedianAPE) {
		t.Errorf("reports %+v", fr)
	}
	for _, tc := range []struct{ in, want string }{
		{header + "32,8,4096,14336,maybe,64,2,1,1,1,1\n", `m.mlp.csv:2:17: use_gated_mlp: "maybe" is not a boolean`},
		{header + "32,8,4096,14336,true,64,3,1,1,1,1\n", "m.mlp.csv:2:25: num_tensor_parallel_workers: 3 does not divide the heads"},
		{header + "32,8,4096,14336,true,64,2,1,0,1,1\n", "m.mlp.csv:2:29: time_stats.attn_post_proj.median: must be > 0, got 0"},
	} {
		if _, err := ParseMLP(strings.NewReader(tc.in), "m.mlp.csv"); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
