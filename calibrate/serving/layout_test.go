package serving

import (
	"strings"
	"testing"
)

// TestResolveLayout: the engine's EP and DP from a row's moe_tp_size,
// moe_ep_size and attention_dp_size.
func TestResolveLayout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		in     Row
		ep, dp int
		err    string
		layout string
	}{
		{"dense row (moe 1 x 1 at tp 2)", Row{TP: 2, MoETP: 1, EP: 1}, 1, 1, "", "tp2"},
		{"no moe columns", Row{TP: 4}, 1, 1, "", "tp4"},
		{"moe degrees 0 on a dense row (not set)", Row{TP: 2, MoETP: 0, EP: 0, DP: 0}, 1, 1, "", "tp2"},
		{"ep without moe_tp_size", Row{TP: 4, EP: 4}, 4, 1, "", "tp4 ep4"},
		{"ep without moe_tp_size, dp implied", Row{TP: 2, EP: 4}, 4, 2, "", "tp2 dp2 ep4"},
		{"experts by tp", Row{TP: 4, MoETP: 4, EP: 1}, 1, 1, "", "tp4"},
		{"ep inside tp", Row{TP: 4, MoETP: 1, EP: 4}, 4, 1, "", "tp4 ep4"},
		{"dp implied", Row{TP: 1, MoETP: 2, EP: 1}, 1, 2, "", "tp1 dp2"},
		{"dp given", Row{TP: 4, MoETP: 1, EP: 16, DP: 4}, 16, 4, "", "tp4 dp4 ep16"},
		{"inconsistent", Row{TP: 4, MoETP: 1, EP: 16, DP: 2}, 0, 0, "tp_size 4 x attention_dp_size 2 = 8 GPUs, but moe_tp_size 1 x moe_ep_size 16 = 16", ""},
		{"not a multiple", Row{TP: 4, MoETP: 1, EP: 2}, 0, 0, "is not a multiple of tp_size 4", ""},
	} {
		r := tt.in
		err := r.ResolveLayout()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || r.EP != tt.ep || r.DP != tt.dp || r.Layout() != tt.layout {
			t.Errorf("%s: ep %d dp %d layout %q err %v; want ep %d dp %d %q", tt.name, r.EP, r.DP, r.Layout(), err, tt.ep, tt.dp, tt.layout)
		}
	}
}

// TestClientsPerDPRank: a row's batch_size is per attention-DP rank, so
// the benchmark ran DP times as many clients.
func TestClientsPerDPRank(t *testing.T) {
	r := Row{TP: 4, MoETP: 1, EP: 16, DP: 4, Concurrency: 8}
	if err := r.ResolveLayout(); err != nil {
		t.Fatal(err)
	}
	if r.Clients() != 32 {
		t.Errorf("Clients = %d, want 8 x dp 4 = 32", r.Clients())
	}
	d := Row{TP: 2, Concurrency: 8}
	if err := d.ResolveLayout(); err != nil || d.Clients() != 8 {
		t.Errorf("dense row: Clients = %d (%v), want 8", d.Clients(), err)
	}
}
