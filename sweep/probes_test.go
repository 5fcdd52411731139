package sweep

import (
	"context"
	"math"
	"strings"
	"testing"
)

// oneConfig is smallOptions cut to one configuration (h100, tp 1).
func oneConfig(t *testing.T) Options {
	t.Helper()
	o := smallOptions(t)
	o.Grid.GPUs, o.Grid.TP = []string{"h100"}, []int{1}
	o.Jobs = 1
	return o
}

// TestTooShortProbe: with 20 requests a probe, the search's best rate is
// measured by a burst (every request in before the first finishes): the row
// says so, sizes no replicas and is not recommended.
func TestTooShortProbe(t *testing.T) {
	o := oneConfig(t)
	o.Requests = 20
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Status != StatusOK || !r.TooShort() {
		t.Fatalf("status %s, too short %v, probes %+v", r.Status, r.TooShort(), r.Probes)
	}
	if want := "probe too short: all 20 requests arrived before the first finished; raise --requests"; !strings.Contains(r.Reason, want) {
		t.Errorf("reason %q does not contain %q", r.Reason, want)
	}
	if r.Replicas != 0 || r.GPUsTotal != 0 || !math.IsNaN(r.CostPerHour) {
		t.Errorf("replicas %d, GPUs %d, cost %g sized from a burst", r.Replicas, r.GPUsTotal, r.CostPerHour)
	}
	if res.Recommended != -1 || r.Recommended {
		t.Errorf("recommended %d: a burst row must not be", res.Recommended)
	}
	// The flag survives the Parquet round trip (merge recomputes Recommend).
	if back := parquetRoundTrip(t, res); !back.Rows[0].TooShort() || back.Recommended != -1 {
		t.Errorf("after a round trip: too short %v, recommended %d", back.Rows[0].TooShort(), back.Recommended)
	}
}

// TestLongProbeNotBurst: the small sweep's 2,000-request probes are not
// bursts, and its rows size replicas.
func TestLongProbeNotBurst(t *testing.T) {
	o := oneConfig(t)
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.TooShort() || r.Replicas == 0 || strings.Contains(r.Reason, "too short") {
		t.Fatalf("too short %v, replicas %d, reason %q", r.TooShort(), r.Replicas, r.Reason)
	}
	for _, p := range r.Probes {
		if p.Burst {
			t.Errorf("probe %+v flagged as a burst", p)
		}
	}
}

// TestRowRejectedReasons: a model length shorter than some prompts rejects
// requests; the row names the reason (prompt_too_long).
func TestRowRejectedReasons(t *testing.T) {
	o := oneConfig(t)
	o.Base.Settings.Serving.MaxModelLen = 600
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Status != StatusUnattainable || !strings.Contains(r.Reason, "rejected") || !strings.Contains(r.Reason, "prompt_too_long") {
		t.Fatalf("status %s, reason %q", r.Status, r.Reason)
	}
	n := 0
	for _, p := range r.Probes {
		n += len(p.Rejected)
	}
	if n == 0 {
		t.Errorf("no probe records its rejections: %+v", r.Probes)
	}
}

// TestManyReplicasFlagged: a target far above one instance's rate flags the
// replica count in the row.
func TestManyReplicasFlagged(t *testing.T) {
	o := oneConfig(t)
	o.TargetRateRPS = 1e5
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Replicas < ManyReplicas || !strings.Contains(r.Reason, "needs ") || !strings.Contains(r.Reason, " replicas for 1e+05 req/s") {
		t.Fatalf("replicas %d, reason %q", r.Replicas, r.Reason)
	}
}

// TestRecommendAvoidsManyReplicas: a cheaper row needing ManyReplicas loses
// to a dearer one needing fewer; a burst row is never recommended.
func TestRecommendAvoidsManyReplicas(t *testing.T) {
	row := func(i, replicas int, cost float64) Row {
		r := newRow(Config{Index: i})
		r.Status, r.MaxRateRPS, r.TargetRateRPS = StatusOK, 10, 1000
		r.Replicas, r.GPUsTotal, r.CostPerHour, r.CostMTok = replicas, replicas, cost, cost
		r.Probes = []Probe{{RateRPS: 10, Pass: true}}
		return r
	}
	rows := []Row{row(0, ManyReplicas, 1), row(1, 20, 5)}
	if got := Recommend(rows); got != 1 {
		t.Errorf("Recommend = %d, want 1 (fewer than %d replicas)", got, ManyReplicas)
	}
	rows[1].Probes[0].Burst = true
	if got := Recommend(rows); got != 0 {
		t.Errorf("Recommend = %d, want 0 (row 1 measured by a burst)", got)
	}
}

// TestNoteRejected: the row's reason gains the rejection reasons its probes
// met, once, unless it already names them.
func TestNoteRejected(t *testing.T) {
	r := newRow(Config{})
	r.Status, r.Reason = StatusUnattainable, "no rate met the SLO down to 0.5 req/s"
	r.Probes = []Probe{{Rejected: map[string]int64{"prompt_too_long": 3}}, {Rejected: map[string]int64{"kv_too_small": 1, "prompt_too_long": 1}}, {}}
	r.noteRejected()
	if want := "no rate met the SLO down to 0.5 req/s; probes rejected requests: kv_too_small, prompt_too_long"; r.Reason != want {
		t.Errorf("reason %q, want %q", r.Reason, want)
	}
	r.Reason = "at zero load: 4 requests rejected (prompt_too_long: 3, kv_too_small: 1)"
	r.noteRejected()
	if want := "at zero load: 4 requests rejected (prompt_too_long: 3, kv_too_small: 1)"; r.Reason != want {
		t.Errorf("reason %q, want %q (already named)", r.Reason, want)
	}
}
