package kernels

import (
	"context"
	"errors"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// TestValidateContextStops: a done context stops Validate and Points with
// its cause and no result; a live one gives the same report as Validate.
func TestValidateContextStops(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	src := TablesSource{T: &Tables{Dir: "mem"}}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("client went away")
	cancel(stop)
	if rep, err := ValidateContext(ctx, g, src); !errors.Is(err, stop) || rep != nil {
		t.Errorf("ValidateContext: %v, %v; want the cause and no report", rep, err)
	}
	if pts, err := PointsContext(ctx, g, src, 10); !errors.Is(err, stop) || pts != nil {
		t.Errorf("PointsContext: %v, %v; want the cause and no points", pts, err)
	}
	if rep, err := ValidateContext(context.Background(), g, src); err != nil || rep.GPU != g.Name {
		t.Errorf("live context: %+v, %v", rep, err)
	}
}
