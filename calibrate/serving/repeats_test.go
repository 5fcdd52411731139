package serving

import (
	"slices"
	"testing"
)

func TestDistinctMeasurements(t *testing.T) {
	base := Row{ID: "a", Line: 2, Model: "m", GPU: "h200_sxm", Precision: "fp8", Engine: "vllm", Version: "0.18.0",
		ISL: 1024, OSL: 1024, Concurrency: 4, TP: 8, TTFTms: 106.441, TPOTms: 8.0121, Harness: "db"}
	dump := base // the same run under another export: only ID, line and harness differ
	dump.ID, dump.Line, dump.Harness = "b", 3, "export"
	rerun := base // a second run of the configuration: its values differ
	rerun.ID, rerun.Line, rerun.TTFTms, rerun.TPOTms = "c", 4, 108.879, 8.0562
	otherConc := base
	otherConc.ID, otherConc.Line, otherConc.Concurrency = "d", 5, 8
	otherTPOT := base // same TTFT, other TPOT: another measurement
	otherTPOT.ID, otherTPOT.Line, otherTPOT.TPOTms = "e", 6, 9
	kept, repeats := DistinctMeasurements([]Row{base, dump, rerun, otherConc, dump, otherTPOT})
	var ids []string
	for _, r := range kept {
		ids = append(ids, r.ID)
	}
	if want := []string{"a", "c", "d", "e"}; !slices.Equal(ids, want) || repeats != 2 {
		t.Fatalf("kept %v, %d repeats; want %v, 2", ids, repeats, want)
	}
	if kept, repeats := DistinctMeasurements(nil); len(kept) != 0 || repeats != 0 {
		t.Fatalf("no rows: kept %d, %d repeats", len(kept), repeats)
	}
}
