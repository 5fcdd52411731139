package sweep

import (
	"context"
	"math"
	"testing"
)

// A grid over the pools' replicas puts aggregated and disaggregated rows in
// one table: no replicas in either pool is an aggregated row, one pool
// without replicas is skipped with the reason, and an xPyD row is sized in
// units of x prefill and y decode instances, each pool's GPUs at its own
// GPU's price.
func TestSweepDisaggregatedRows(t *testing.T) {
	o := smallOptions(t)
	o.Grid = Grid{GPUs: []string{"h100"}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192},
		Settings: []Axis{{Key: "disaggregation.prefill.replicas", Values: []string{"0", "1"}}, {Key: "disaggregation.decode.replicas", Values: []string{"0", "2"}}}}
	o.Base.Settings.Disaggregation.Decode.GPU = "h200"
	o.Requests, o.Probes, o.TargetRateRPS = 800, 4, 30
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Rows
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0].Status != StatusOK || rows[1].Status != StatusSkipped || rows[2].Status != StatusSkipped || rows[3].Status != StatusOK {
		t.Fatalf("statuses %s %s %s %s (%s / %s)", rows[0].Status, rows[1].Status, rows[2].Status, rows[3].Status, rows[1].Reason, rows[3].Reason)
	}
	agg, pd := rows[0], rows[3]
	price := o.GPUCostPerHour
	// 1P2D: 1 h100 + 2 h200 per unit.
	unitCost := price["h100"] + 2*price["h200"]
	if pd.GPUsTotal != 3*pd.Replicas || math.Abs(pd.CostPerHour-float64(pd.Replicas)*unitCost) > 1e-9 {
		t.Fatalf("1P2D row: %d units, %d GPUs, $%g/h; want 3 GPUs and $%g/h a unit", pd.Replicas, pd.GPUsTotal, pd.CostPerHour, unitCost)
	}
	if agg.GPUsTotal != agg.Replicas || math.Abs(agg.CostPerHour-float64(agg.GPUsTotal)*price["h100"]) > 1e-9 {
		t.Fatalf("aggregated row: %d replicas, %d GPUs, $%g/h", agg.Replicas, agg.GPUsTotal, agg.CostPerHour)
	}
	t.Logf("aggregated %.2f req/s per instance, %d GPUs, $%.2f/h; 1P2D %.2f req/s per unit, %d GPUs, $%.2f/h",
		agg.MaxRateRPS, agg.GPUsTotal, agg.CostPerHour, pd.MaxRateRPS, pd.GPUsTotal, pd.CostPerHour)
}
