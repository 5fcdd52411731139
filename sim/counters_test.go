package sim

import "testing"

// TestCounters: run.json's counters are the Result's totals, and they
// conserve requests (arrived = completed + rejected + in flight) on a run
// whose small KV pool (600 blocks) forces preemptions.
func TestCounters(t *testing.T) {
	cfg := Config{Scheduler: schedCfg(600), StepModel: realStep(t, 1), Replicas: 1}
	res, sink := runOnce(t, chatYAML, cfg)
	c := res.Counters()
	want := Counters{Arrived: res.Arrived, Completed: res.Completed, Rejected: res.Rejected, InFlight: res.InFlight,
		PromptTokens: res.PromptTokens, OutputTokensGenerated: res.OutputTokensGenerated,
		Steps: res.Steps, Events: res.Events, Preemptions: res.Preemptions, SimulatedS: res.End.Seconds()}
	if c != want {
		t.Fatalf("Counters() = %+v, want %+v", c, want)
	}
	if c.Arrived != c.Completed+c.Rejected+c.InFlight || c.Arrived != 660 {
		t.Errorf("arrived %d != completed %d + rejected %d + in flight %d (want 660 arrived)", c.Arrived, c.Completed, c.Rejected, c.InFlight)
	}
	if c.Preemptions == 0 {
		t.Error("no preemptions: the 600-block pool should force some")
	}
	if c.Completed != int64(len(sink.reqs)) || !(c.SimulatedS > 0) || c.Steps <= 0 || c.Events <= 0 {
		t.Errorf("counters %+v disagree with %d request records", c, len(sink.reqs))
	}
}
