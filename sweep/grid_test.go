package sweep

import (
	"reflect"
	"strings"
	"testing"
)

func TestGridConfigsOrder(t *testing.T) {
	g := Grid{GPUs: []string{"h100", "a100-80gb"}, TP: []int{1, 2, 4}, MaxNumSeqs: []int{128, 256}, MaxNumBatchedTokens: []int{2048, 8192}}
	cs := g.Configs()
	if len(cs) != g.Size() || g.Size() != 24 {
		t.Fatalf("%d configs, size %d", len(cs), g.Size())
	}
	for gi, gpu := range g.GPUs {
		for ti, tp := range g.TP {
			for si, s := range g.MaxNumSeqs {
				for bi, b := range g.MaxNumBatchedTokens {
					idx := ((gi*3+ti)*2+si)*2 + bi
					want := Config{Index: idx, GPU: gpu, TP: tp, DP: 1, EP: 1, MaxNumSeqs: s, MaxNumBatchedTokens: b}
					if !reflect.DeepEqual(cs[idx], want) {
						t.Errorf("config %d = %+v, want %+v", idx, cs[idx], want)
					}
				}
			}
		}
	}
}

// TestValidateGrid: bad grids fail before anything runs, naming the value.
func TestValidateGrid(t *testing.T) {
	tests := []struct {
		name   string
		modify func(o *Options)
		want   string
	}{
		{"unknown gpu", func(o *Options) { o.Grid.GPUs = []string{"h100", "h900"} }, `gpus: unknown GPU "h900" (known: `},
		{"tp heads", func(o *Options) { o.Grid.TP = []int{1, 3} }, "tp: 3 does not divide num_heads 32 of llama-3.1-8b"},
		{"tp too big", func(o *Options) { o.Grid.TP = []int{64} }, "tp: 64 does not divide num_heads 32 of llama-3.1-8b"},
		{"empty gpus", func(o *Options) { o.Grid.GPUs = nil }, "gpus: empty list"},
		{"empty tp", func(o *Options) { o.Grid.TP = nil }, "tp: empty list"},
		{"zero seqs", func(o *Options) { o.Grid.MaxNumSeqs = []int{0} }, "max_num_seqs: 0: must be >= 1"},
		{"dup tokens", func(o *Options) { o.Grid.MaxNumBatchedTokens = []int{2048, 2048} }, "max_num_batched_tokens: 2048 listed twice"},
		{"dup gpu", func(o *Options) { o.Grid.GPUs = []string{"h100", "h100"} }, `gpus: "h100" listed twice`},
		{"gpu alias", func(o *Options) { o.Grid.GPUs = []string{"h100", "H100-SXM"} }, `gpus: "H100-SXM" listed twice ("h100" is the same GPU, h100)`},
		{"no slo", func(o *Options) { o.SLO = SLO{} }, "slo: at least one bound"},
		{"bad shard", func(o *Options) { o.Shard = Shard{Index: 3, Count: 3} }, "shard: index must be in [0, 3)"},
		{"target", func(o *Options) { o.TargetRateRPS = -1 }, "target_rate: must be >= 0"},
		{"price", func(o *Options) { o.GPUCostPerHour = map[string]float64{"h100": 0} }, "gpu_cost[h100]: must be > 0"},
		{"open and closed loop", func(o *Options) {
			o.Workload = mustSpec(t, "clients:\n  - arrival: {process: poisson, rate: 1, num_requests: 10}\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 10}\n"+
				"  - concurrency: 4\n    num_requests: 10\n    prompt_tokens: {dist: constant, value: 10}\n    output_tokens: {dist: constant, value: 10}\n")
		}, "clients[1] (client-1) is closed loop while clients[0] (client-0) is open loop"},
	}
	for _, tt := range tests {
		o := smallOptions(t)
		tt.modify(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	o := smallOptions(t)
	if err := o.Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
}

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/4", Shard{0, 4}, false}, {" 3/4 ", Shard{3, 4}, false},
		{"4/4", Shard{}, true}, {"-1/4", Shard{}, true}, {"1/0", Shard{}, true},
		{"0/0", Shard{}, true}, {"0/-1", Shard{}, true},
		{"1", Shard{}, true}, {"a/b", Shard{}, true},
	} {
		got, err := ParseShard(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v", tt.in, got, err)
		}
	}
	s := Shard{Index: 1, Count: 3}
	for i, want := range []bool{false, true, false, false, true} {
		if s.Has(i) != want {
			t.Errorf("shard 1/3 has %d = %v", i, !want)
		}
	}
}

// TestProbeWorkloadScalesCounts: --requests is split over open-loop
// clients by their rates; duration bounds become counts.
func TestProbeWorkloadScalesCounts(t *testing.T) {
	sp := mustSpec(t, `
duration: 60s
clients:
  - name: a
    arrival: {rate: 3, num_requests: 10}
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 10}
  - name: b
    arrival: {rate: 1, duration: 30s}
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 10}
`)
	w, err := probeWorkload(sp, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if w.Duration != 0 || w.Clients[0].Arrival.NumRequests != 750 || w.Clients[1].Arrival.NumRequests != 250 || w.Clients[1].Arrival.Duration != 0 {
		t.Errorf("probe workload: duration %v, counts %d, %d", w.Duration, w.Clients[0].Arrival.NumRequests, w.Clients[1].Arrival.NumRequests)
	}
	if sp.Clients[0].Arrival.NumRequests != 10 || sp.Duration == 0 {
		t.Error("the input spec was modified")
	}
}
