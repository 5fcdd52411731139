package sweep

import (
	"math"
	"slices"
	"testing"
)

func TestPareto(t *testing.T) {
	pts := []Point{
		{PerUser: 10, PerGPU: 1000}, // 0 front (best per GPU)
		{PerUser: 20, PerGPU: 800},  // 1 front
		{PerUser: 15, PerGPU: 700},  // 2 dominated by 1
		{PerUser: 40, PerGPU: 300},  // 3 front (best per user)
		{PerUser: 40, PerGPU: 200},  // 4 dominated by 3 (equal x, lower y)
		{PerUser: 20, PerGPU: 800},  // 5 equal to 1: kept
		{PerUser: math.NaN(), PerGPU: 5000},
		{PerUser: 0, PerGPU: 9000},
	}
	if got, want := Pareto(pts), []int{0, 1, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("Pareto = %v, want %v", got, want)
	}
	if got := Pareto(nil); len(got) != 0 {
		t.Errorf("Pareto(nil) = %v", got)
	}
}

func TestRecommend(t *testing.T) {
	nan := math.NaN()
	row := func(idx int, maxRate, costH, costM float64, gpus int, perGPU float64) Row {
		r := newRow(Config{Index: idx})
		r.Status, r.MaxRateRPS, r.CostPerHour, r.CostMTok, r.GPUsTotal, r.OutputTokensPerSPerGPU = StatusOK, maxRate, costH, costM, gpus, perGPU
		r.TargetRateRPS = 40
		return r
	}
	rows := []Row{
		row(0, 10, 12, 0.5, 4, 900),
		row(1, 20, 10, 0.6, 2, 800),  // cheapest per hour
		row(2, 20, 10, 0.55, 2, 700), // same per hour, cheaper per Mtok: wins
		row(3, 0, 1, 0.1, 1, 5000),   // does not meet the SLO
		row(4, 50, nan, nan, 1, 2000),
	}
	rows[3].Status = StatusUnattainable
	if got := Recommend(rows); got != 2 {
		t.Errorf("with target: recommended %d, want 2", got)
	}
	for i := range rows {
		rows[i].TargetRateRPS = nan
	}
	if got := Recommend(rows); got != 4 {
		t.Errorf("without target: recommended %d, want 4 (highest tok/s per GPU)", got)
	}
	if got := Recommend(rows[3:4]); got != -1 {
		t.Errorf("nothing meets the SLO: %d", got)
	}
}
