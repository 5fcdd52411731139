package sweep

import (
	"math"
	"slices"
	"testing"
)

func TestChartsShapes(t *testing.T) {
	slo, err := ParseSLO("ttft_p99=500ms,tpot_p99=50ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := func(i int, user, perGPU float64, pareto bool, probes ...Probe) Row {
		r := newRow(Config{Index: i, GPU: "h100", TP: 1})
		r.Status, r.TokensPerSPerUser, r.OutputTokensPerSPerGPU, r.Pareto = StatusOK, user, perGPU, pareto
		r.Probes = probes
		return r
	}
	skipped := newRow(Config{Index: 3, GPU: "l4", TP: 8})
	skipped.Status = StatusSkipped
	res := &Result{Rows: []Row{
		ok(0, 80, 900, true, Probe{RateRPS: 8, TTFTP99Ms: 90, TPOTP99Ms: 12}, Probe{RateRPS: 2, TTFTP99Ms: 40, TPOTP99Ms: 10},
			Probe{RateRPS: 16, TTFTP99Ms: math.NaN(), TPOTP99Ms: math.NaN()}, Probe{RateRPS: 12, EarlyStop: true, TTFTP99Ms: 900}),
		ok(1, 40, 1500, true, Probe{RateRPS: 4, TTFTP99Ms: 60, TPOTP99Ms: math.NaN()}),
		ok(2, 60, 700, false),
		skipped,
	}}
	charts, err := res.Charts(slo)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3 {
		t.Fatalf("%d charts, want Pareto, TTFT and TPOT", len(charts))
	}
	// The Pareto chart: log axes; the front; a point per OK row in its
	// configuration's style, labelled with its name; the TPOT bound at
	// 1000 / 50 ms = 20 tokens/s per user across the points' y range.
	pareto := charts[0].Series
	if !charts[0].LogX || !charts[0].LogY || !charts[0].NoLegend || len(pareto) != 5 {
		t.Fatalf("Pareto chart: log axes %v %v, %d series, want the front, 3 configurations and the TPOT line", charts[0].LogX, charts[0].LogY, len(pareto))
	}
	for k, want := range []struct {
		x     float64
		label string
	}{{80, "#0 h100 tp1"}, {40, "#1 h100 tp1"}, {60, "#2 h100 tp1"}} {
		s := pareto[1+k]
		if !slices.Equal(s.X, []float64{want.x}) || !slices.Equal(s.Labels, []string{want.label}) || s.Style != k+1 || s.OptionalLabels != (k == 2) {
			t.Errorf("configuration %d on the Pareto chart: %+v, want x %g labelled %q in style %d (optional off the front)", k, s, want.x, want.label, k+1)
		}
	}
	if !slices.Equal(pareto[0].X, []float64{40, 80}) || !slices.Equal(pareto[0].Y, []float64{1500, 900}) || !pareto[0].Line || pareto[0].Points {
		t.Errorf("front = %v/%v, want the Pareto rows sorted by x, as a line", pareto[0].X, pareto[0].Y)
	}
	if l := pareto[4]; !l.Dashed || !slices.Equal(l.X, []float64{20, 20}) || !slices.Equal(l.Y, []float64{700, 1500}) || l.Label != "p99 TPOT SLO 50ms" {
		t.Errorf("TPOT SLO line %+v, want x = 1000/50 ms = 20 from y 700 to 1500", l)
	}
	ttft := charts[1].Series
	if !slices.Equal(ttft[0].X, []float64{2, 8}) || !slices.Equal(ttft[0].Y, []float64{40, 90}) {
		t.Errorf("row 0 TTFT = %v/%v, want completed probes sorted by rate (NaN and early stops left out)", ttft[0].X, ttft[0].Y)
	}
	if ttft[0].Label != "#0 h100 tp1" || ttft[2].Label != "#2 h100 tp1" {
		t.Errorf("labels %q, %q: want every configuration labelled", ttft[0].Label, ttft[2].Label)
	}
	if ttft[0].Style != 1 || ttft[2].Style != 3 || charts[2].Series[2].Style != 3 || !charts[1].NoLegend {
		t.Errorf("a configuration must keep one style in both rate charts, whose legend is a separate panel")
	}
	if l, ok := Legend(charts); !ok || len(l.Entries) != 6 || l.Entries[0].Label != "#0 h100 tp1" || l.Entries[3].Label != "Pareto front" ||
		l.Entries[4].Label != "p99 TPOT SLO 50ms" || l.Entries[5].Label != "p99 TTFT SLO 500ms" || !l.Entries[5].Dashed {
		t.Errorf("legend %+v: want the three configurations, the front and the two SLO lines (the TPOT one once)", l.Entries)
	}
	last := ttft[len(ttft)-1]
	if last.Label != "p99 TTFT SLO 500ms" || !slices.Equal(last.X, []float64{2, 8}) || !slices.Equal(last.Y, []float64{500, 500}) {
		t.Errorf("SLO line %+v, want 500 ms across the probed rates", last)
	}
	if tpot := charts[2].Series; len(tpot[1].X) != 0 {
		t.Errorf("row 1's NaN TPOT must be left out, got %v", tpot[1].X)
	}
	if _, err := (&Result{Rows: []Row{skipped}}).Charts(slo); err == nil {
		t.Error("no OK row: want an error")
	}
}

// A concurrency sweep draws its latency charts against the probes'
// concurrency (sorted by it), with axis and titles that say so.
func TestChartsConcurrencyAxis(t *testing.T) {
	slo, err := ParseSLO("ttft_p99=2s")
	if err != nil {
		t.Fatal(err)
	}
	r := newRow(Config{Index: 0, GPU: "h100", TP: 1})
	r.Status, r.TokensPerSPerUser, r.OutputTokensPerSPerGPU, r.Pareto = StatusOK, 50, 800, true
	// Rates fall as concurrency rises past saturation here, so sorting by
	// rate would give another order.
	r.Probes = []Probe{{Concurrency: 64, RateRPS: 9, TTFTP99Ms: 900}, {Concurrency: 8, RateRPS: 10, TTFTP99Ms: 100}, {Concurrency: 32, RateRPS: 11, TTFTP99Ms: 400}}
	charts, err := (&Result{Rows: []Row{r}}).Charts(slo)
	if err != nil {
		t.Fatal(err)
	}
	ttft := charts[1]
	if ttft.XLabel != "Concurrency (clients)" || ttft.Title != "p99 TTFT vs concurrency" {
		t.Errorf("axis %q, title %q", ttft.XLabel, ttft.Title)
	}
	if s := ttft.Series[0]; !slices.Equal(s.X, []float64{8, 32, 64}) || !slices.Equal(s.Y, []float64{100, 400, 900}) {
		t.Errorf("series %v/%v, want the probes by concurrency", s.X, s.Y)
	}
}
