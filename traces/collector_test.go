package traces

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// within reports whether an estimated percentile is within the sketch's
// relative accuracy of the exact value.
func within(est, exact float64) bool {
	return math.Abs(est-exact) <= DefaultRelativeAccuracy*math.Abs(exact)*(1+1e-9)
}

// TestCollectorHandComputed checks a three-request run (plus one rejection)
// against figures computed by hand from the metric definitions.
func TestCollectorHandComputed(t *testing.T) {
	recs := []RequestRecord{
		// TTFT 500, E2E 1500, TPOT (1500-500)/10 = 100, queue 100.
		{ID: 1, Client: "a", ArrivalS: 0, FirstScheduledS: 0.1, FirstTokenS: 0.5, FinishS: 1.5, PromptTokens: 100, CachedTokens: 40, OutputTokens: 11, Preemptions: 1, Status: StatusOK},
		// TTFT 200, E2E 1000, TPOT 800/4 = 200, queue 0.
		{ID: 2, Client: "b", ArrivalS: 1, FirstScheduledS: 1, FirstTokenS: 1.2, FinishS: 2, PromptTokens: 50, OutputTokens: 5, Status: StatusOK},
		// TTFT 1000, E2E 1000, TPOT undefined, queue 100.
		{ID: 3, Client: "a", ArrivalS: 1.5, FirstScheduledS: 1.6, FirstTokenS: 2.5, FinishS: 2.5, PromptTokens: 30, OutputTokens: 1, Status: StatusOK},
		{ID: 4, Client: "b", ArrivalS: 0.5, FirstScheduledS: math.NaN(), FirstTokenS: math.NaN(), FinishS: math.NaN(), PromptTokens: 9000, Status: "rejected:prompt_too_long"},
	}
	c := NewCollector([]string{"a", "b"})
	for i := range recs {
		recs[i].FillLatencies()
		c.AddRequest(&recs[i])
	}
	// ITL gaps, in seconds: request 1 has 10 gaps of 0.1 s, request 2 has 4 of 0.2 s.
	for range 10 {
		c.AddITL(0, 0.1)
	}
	for range 4 {
		c.AddITL(1, 0.2)
	}
	c.AddPreemptions(1)
	c.SetKV(1000, 640)
	s := c.Summary()

	// Window: first arrival 0 s to last finish 2.5 s.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(s.Requests), 4},
		{"completed", float64(s.Completed), 3},
		{"rejected", float64(s.Rejected), 1},
		{"duration_s", s.DurationS, 2.5},
		{"throughput_rps", s.ThroughputRPS, 3 / 2.5},
		{"output_tokens_per_s", s.OutputTokensPerS, 17 / 2.5},
		{"input_tokens_per_s", s.InputTokensPerS, 180 / 2.5},
		{"cached_tokens", float64(s.CachedTokens), 40},
		{"ttft mean", s.TTFTms.Mean, (500 + 200 + 1000) / 3.0},
		{"ttft count", float64(s.TTFTms.Count), 3},
		{"tpot mean", s.TPOTms.Mean, 150},
		{"tpot count", float64(s.TPOTms.Count), 2},
		{"e2e mean", s.E2Ems.Mean, 3500 / 3.0},
		{"queue mean", s.QueueMs.Mean, 200 / 3.0},
		{"itl mean", s.ITLms.Mean, (10*100 + 4*200) / 14.0},
		{"itl count", float64(s.ITLms.Count), 14},
		{"preemptions", float64(s.Preemptions), 1},
		// Client a: arrivals 0 and 1.5, finishes 1.5 and 2.5: window 2.5 s.
		{"a completed", float64(s.PerClient[0].Completed), 2},
		{"a throughput", s.PerClient[0].ThroughputRPS, 2 / 2.5},
		{"a ttft mean", s.PerClient[0].TTFTms.Mean, 750},
		{"a tpot mean", s.PerClient[0].TPOTms.Mean, 100},
		{"a itl mean", s.PerClient[0].ITLms.Mean, 100},
		{"a preemptions", float64(s.PerClient[0].Preemptions), 1},
		// Client b: rejected arrival 0.5 opens its window, finish 2: 1.5 s.
		{"b duration", s.PerClient[1].DurationS, 1.5},
		{"b output tok/s", s.PerClient[1].OutputTokensPerS, 5 / 1.5},
		{"b rejected", float64(s.PerClient[1].Rejected), 1},
	}
	for _, ck := range checks {
		if !approx(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	// Percentiles: TTFT {200, 500, 1000}: p50 = 500, p90 = p99 = 1000.
	for _, ck := range []struct {
		name      string
		got, want float64
	}{{"ttft p50", s.TTFTms.P50, 500}, {"ttft p90", s.TTFTms.P90, 1000}, {"ttft p99", s.TTFTms.P99, 1000},
		{"tpot p50", s.TPOTms.P50, 100}, {"itl p90", s.ITLms.P90, 200}, {"itl p50", s.ITLms.P50, 100}} {
		if !within(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v within %v", ck.name, ck.got, ck.want, DefaultRelativeAccuracy)
		}
	}
	if s.KVBlocks != (KVBlocks{Total: 1000, PeakUsed: 640}) {
		t.Errorf("kv = %+v", s.KVBlocks)
	}
	if s.RejectedReasons["prompt_too_long"] != 1 || len(s.RejectedReasons) != 1 {
		t.Errorf("rejected reasons = %v", s.RejectedReasons)
	}
	if len(s.PerClient) != 2 || s.PerClient[0].Name != "a" || s.PerClient[1].Name != "b" {
		t.Errorf("per-client order: %+v", s.PerClient)
	}
}

func TestSummaryJSON(t *testing.T) {
	// An empty run and a run with only rejections must encode: no NaN, no Inf.
	empty := NewCollector([]string{"x"})
	onlyRejected := NewCollector(nil)
	onlyRejected.AddRequest(&RequestRecord{Client: "late", ArrivalS: 3, Status: "rejected"})
	for _, c := range []*Collector{empty, onlyRejected} {
		b, err := json.Marshal(c.Summary())
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		text := string(b)
		for _, key := range []string{`"requests"`, `"completed"`, `"rejected"`, `"duration_s"`, `"throughput_rps"`,
			`"output_tokens_per_s"`, `"input_tokens_per_s"`, `"ttft_ms":{"count":0,"mean":0,"std":0,"p50":0,"p90":0,"p99":0}`,
			`"tpot_ms"`, `"itl_ms"`, `"e2e_ms"`, `"queue_ms"`, `"preemptions"`, `"kv_blocks":{"total":0,"peak_used":0}`,
			`"per_client":[{"name":`, `"rejected_reasons":{`} {
			if !strings.Contains(text, key) {
				t.Errorf("summary JSON lacks %s:\n%s", key, text)
			}
		}
	}
	s := onlyRejected.Summary()
	if s.RejectedReasons["unspecified"] != 1 || s.PerClient[0].Name != "late" || s.ThroughputRPS != 0 {
		t.Errorf("only rejected: %+v", s)
	}
}

func TestCollectorDeterministicJSON(t *testing.T) {
	run := func() string {
		c := NewCollector([]string{"chat"})
		for _, r := range testRequests(2000) {
			c.AddRequest(&r)
			c.AddITL(0, r.TPOTms/1e3)
		}
		b, err := json.Marshal(c.Summary())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := run(), run(); a != b {
		t.Error("two identical runs gave different summary JSON")
	}
}

func TestAddITLPanicsOnBadClient(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AddITL(5) on a one-client collector did not panic")
		}
	}()
	NewCollector([]string{"a"}).AddITL(5, 0.01)
}
