package roofline

import (
	"errors"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// ProfileEngineTerms carries every engine term of a profile unchanged, the
// options override the capture limit only when set, and the factors are
// the reciprocals of the efficiencies (1 when unset) and the unfused input
// share.
func TestProfileEngineTerms(t *testing.T) {
	p := &hardware.Profile{
		StepOverheadUS: 1, PerRequestOverheadUS: 2, PerRequestKVHeadUS: 3,
		HostStepUS: 4, HostPerRequestUS: 5, AsyncScheduling: true,
		GraphLaunchFactor: 0.25, GraphMaxTokens: 6, GraphCaptureMaxTokens: 7,
		ServingComputeEfficiency: 0.8, ServingAllReduceEfficiency: 0.5, GEMMInputFusedFraction: 0.75,
	}
	want := EngineTerms{
		StepOverheadUS: 1, PerRequestUS: 2, PerRequestKVHeadUS: 3,
		HostStepUS: 4, HostPerRequestUS: 5, AsyncScheduling: true,
		GraphLaunchFactor: 0.25, GraphMaxTokens: 6, GraphCaptureMaxTokens: 7,
		ServingComputeEfficiency: 0.8, ServingAllReduceEfficiency: 0.5, GEMMInputFusedFraction: 0.75,
	}
	e := ProfileEngineTerms(p)
	if e != want {
		t.Fatalf("got %+v\nwant %+v", e, want)
	}
	if got, _ := e.withOptions(StepOptions{}); got != want {
		t.Fatalf("no override: %+v", got)
	}
	if got, _ := e.withOptions(StepOptions{GraphCaptureMaxTokens: 512}); got.GraphCaptureMaxTokens != 512 {
		t.Fatalf("override: %+v", got)
	}
	var oe *OptionError
	if _, err := e.withOptions(StepOptions{GraphCaptureMaxTokens: -1}); !errors.As(err, &oe) || oe.Field != "graph_capture_max_tokens" {
		t.Fatalf("negative capture limit: %v", err)
	}
	if s := e.scales(); s != (engineScales{computeScale: 1.25, commScale: 2, inputScale: 0.25}) {
		t.Fatalf("scales %+v", s)
	}
	if s := (EngineTerms{}).scales(); s != (engineScales{1, 1, 1}) {
		t.Fatalf("unset scales %+v", s)
	}
	// 1 + 2 x 3 requests + 3 x (3 requests x 8 KV-head layers) µs.
	if got := e.overheadSeconds(3, 8); got != (1+2*3+3*24)*1e-6 {
		t.Fatalf("overhead %g s", got)
	}
	// Host work 4 + 5 x 2 = 14 µs: async, 10 µs of GPU time hides 10 of it.
	if got := e.hostSeconds(2, 10e-6); !near(got, 4e-6, 1e-12) {
		t.Fatalf("async host %g s", got)
	}
	e.AsyncScheduling = false
	if got := e.hostSeconds(2, 10e-6); got != 14e-6 {
		t.Fatalf("sync host %g s", got)
	}
	if e.launchScale(100, 0) != 0.25 || e.launchScale(6, 3) != 0.25 || e.launchScale(7, 3) != 1 {
		t.Fatal("launch scale")
	}
}
