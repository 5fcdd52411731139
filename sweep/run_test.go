package sweep

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
)

func runOK(t *testing.T, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func csvOf(t *testing.T, r *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRunSmall is the small end-to-end sweep: every configuration is
// searched, its max rate passed and the next probe above it failed, and the
// derived columns follow from their definitions.
func TestRunSmall(t *testing.T) {
	o := smallOptions(t)
	res := runOK(t, o)
	t.Logf("\n%s", csvOf(t, res))
	if len(res.Rows) != 4 || res.GridSize != 4 || res.Partial {
		t.Fatalf("rows %d grid %d partial %v", len(res.Rows), res.GridSize, res.Partial)
	}
	for _, r := range res.Rows {
		if r.Status != StatusOK {
			t.Errorf("config %d: status %s (%s)", r.Index, r.Status, r.Reason)
			continue
		}
		// The max rate is the highest passing probe; some probe above it failed.
		hiFail := math.Inf(1)
		for _, p := range r.Probes {
			if p.Pass && p.RateRPS > r.MaxRateRPS {
				t.Errorf("config %d: probe at %g passed above max rate %g", r.Index, p.RateRPS, r.MaxRateRPS)
			}
			if !p.Pass {
				hiFail = math.Min(hiFail, p.RateRPS)
			}
		}
		if !(hiFail > r.MaxRateRPS) || math.IsInf(hiFail, 1) {
			t.Errorf("config %d: no failing probe above the max rate %g", r.Index, r.MaxRateRPS)
		}
		if r.TTFTP99Ms > 500 || r.TPOTP99Ms > 50 {
			t.Errorf("config %d: SLO violated at max rate: ttft p99 %g tpot p99 %g", r.Index, r.TTFTP99Ms, r.TPOTP99Ms)
		}
		if got, want := r.OutputTokensPerSPerGPU, r.OutputTokensPerS/float64(r.TP); got != want {
			t.Errorf("config %d: per-GPU %g, want %g", r.Index, got, want)
		}
		// p99 bounds hold at the max rate, so at least about 98% of the
		// requests meet both per-request thresholds, and none beyond all.
		if !(r.GoodputRPS >= 0.97*r.ThroughputRPS && r.GoodputRPS <= r.ThroughputRPS) {
			t.Errorf("config %d: goodput %g req/s outside [0.97, 1] x throughput %g", r.Index, r.GoodputRPS, r.ThroughputRPS)
		}
		if got, want := r.TokensPerSPerUser, 1000/r.TPOTMeanMs; got != want {
			t.Errorf("config %d: per-user %g, want %g", r.Index, got, want)
		}
		if want := int(math.Ceil(40 / r.MaxRateRPS)); r.Replicas != want || r.GPUsTotal != want*r.TP {
			t.Errorf("config %d: replicas %d gpus %d, want %d, %d", r.Index, r.Replicas, r.GPUsTotal, want, want*r.TP)
		}
		if want := float64(r.GPUsTotal) * r.GPUCostPerHour; math.Abs(r.CostPerHour-want) > 1e-9*want {
			t.Errorf("config %d: cost/h %g, want %g", r.Index, r.CostPerHour, want)
		}
	}
	if res.Recommended < 0 {
		t.Fatal("no recommendation")
	}
	rec := res.Rows[res.Recommended]
	for _, r := range res.Rows {
		if r.Status == StatusOK && r.CostPerHour < rec.CostPerHour {
			t.Errorf("config %d costs %g/h, less than the recommended %d (%g/h)", r.Index, r.CostPerHour, rec.Index, rec.CostPerHour)
		}
	}
}

// TestRunDeterministicAcrossJobs: one worker or four, the CSV bytes agree.
func TestRunDeterministicAcrossJobs(t *testing.T) {
	o := smallOptions(t)
	o.Jobs = 1
	a := csvOf(t, runOK(t, o))
	o.Jobs = 4
	b := csvOf(t, runOK(t, o))
	if !bytes.Equal(a, b) {
		t.Fatalf("jobs=1 and jobs=4 differ:\n%s\n---\n%s", a, b)
	}
}

// TestShardMergeEqualsUnsharded: three shards merged give the unsharded
// table byte for byte (Pareto and recommendation recomputed by Merge).
func TestShardMergeEqualsUnsharded(t *testing.T) {
	o := smallOptions(t)
	whole := csvOf(t, runOK(t, o))
	var parts []*Result
	for i := 0; i < 3; i++ {
		o.Shard = Shard{Index: i, Count: 3}
		r := runOK(t, o)
		for _, row := range r.Rows {
			if row.Index%3 != i {
				t.Fatalf("shard %d ran config %d", i, row.Index)
			}
		}
		// Through Parquet, as the CLI does.
		parts = append(parts, parquetRoundTrip(t, r))
	}
	merged, err := Merge(parts[2], parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if got := csvOf(t, merged); !bytes.Equal(got, whole) {
		t.Fatalf("merged shards differ from the unsharded run:\n%s\n---\n%s", got, whole)
	}
	if merged.Partial {
		t.Error("merged result marked partial")
	}
	if _, err := Merge(parts[0], parts[0]); err == nil {
		t.Error("merging a shard twice: no error")
	}
	o.Shard = Shard{}
	o.Seed = 8
	other := runOK(t, o)
	if _, err := Merge(parts[0], other); err == nil {
		t.Error("merging different sweeps: no error")
	}
}

// TestEarlyStopIsExact: stopping failing probes early changes no verdict,
// so the searched rates and the rows' metrics are the same.
func TestEarlyStopIsExact(t *testing.T) {
	o := smallOptions(t)
	fast := runOK(t, o)
	o.DisableEarlyStop = true
	full := runOK(t, o)
	stopped := 0
	for i := range fast.Rows {
		a, b := fast.Rows[i], full.Rows[i]
		if len(a.Probes) != len(b.Probes) {
			t.Fatalf("config %d: %d probes vs %d", a.Index, len(a.Probes), len(b.Probes))
		}
		for j := range a.Probes {
			if a.Probes[j].RateRPS != b.Probes[j].RateRPS || a.Probes[j].Pass != b.Probes[j].Pass {
				t.Errorf("config %d probe %d: %+v vs %+v", a.Index, j, a.Probes[j], b.Probes[j])
			}
			if a.Probes[j].EarlyStop {
				stopped++
			}
		}
		if a.MaxRateRPS != b.MaxRateRPS || a.TTFTP99Ms != b.TTFTP99Ms {
			t.Errorf("config %d: max rate %g vs %g", a.Index, a.MaxRateRPS, b.MaxRateRPS)
		}
	}
	if stopped == 0 {
		t.Error("no probe stopped early: the test exercises nothing")
	}
}

// TestRunCancel: a cancelled sweep returns the completed configurations,
// marked partial, and an error wrapping context.Canceled.
func TestRunCancel(t *testing.T) {
	o := smallOptions(t)
	o.Jobs = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Run(ctx, o, func(done, total int) {
		if done == 1 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || !res.Partial || len(res.Rows) != 1 {
		t.Fatalf("partial result: %+v", res)
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(back.Rows) != 1 || !back.Partial {
		t.Fatalf("reading the partial file: %v %+v", err, back)
	}
}

// TestRunSkipsWhatDoesNotFit: Llama-3.1-70B in bf16 does not fit one L40S;
// the row says why and nothing is simulated.
func TestRunSkipsWhatDoesNotFit(t *testing.T) {
	o := smallOptions(t)
	o.Base.Model = mustModel(t, "llama-3.1-70b")
	o.Grid = Grid{GPUs: []string{"l40s"}, TP: []int{1}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}}
	res := runOK(t, o)
	r := res.Rows[0]
	if r.Status != StatusSkipped || r.Reason == "" || len(r.Probes) != 0 {
		t.Fatalf("row %+v", r)
	}
	if res.Recommended != -1 {
		t.Error("recommended a configuration that does not fit")
	}
}
