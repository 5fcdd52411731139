package serve

import (
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// A measured spot-check table with a bad cell is an error naming its line
// and column; a good one gives a point per row.
func TestBuildMeasuredExampleErrors(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	const head = "shape,m,n,k,precision,status,time_s,kernel,device,torch,reason\n"
	const good = "decode-gemv,1,4096,4096,bf16,ok,1.7e-05,torch.matmul,H100,2.11,\n"
	ex, err := buildMeasuredExample(strings.NewReader(head+good+"prefill,512,4096,4096,bf16,failed,,,H100,2.11,oom\n"), g)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Points) != 2 || len(ex.Shapes) != 2 || ex.Points[1].Measured == nil || ex.Points[1].Measured.Reason != "oom" {
		t.Errorf("points %+v shapes %v", ex.Points, ex.Shapes)
	}
	for _, c := range []struct{ table, want string }{
		{head, "no rows"},
		{"shape,m\n" + "a,1\n", `missing required column "n"`},
		{head + good + "x,1,4096,four,bf16,ok,1e-5,k,H100,2.11,\n", `measured example:3:10: k: want an integer, got "four"`},
		{head + "x,1,4096,4096,fp3,ok,1e-5,k,H100,2.11,\n", `measured example:2:15: precision: unknown "fp3"`},
		{head + "x,1,4096,4096,bf16,ok,0,k,H100,2.11,\n", `measured example:2:23: time_s: must be > 0, got 0`},
	} {
		if _, err := buildMeasuredExample(strings.NewReader(c.table), g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.table, err, c.want)
		}
	}
}
