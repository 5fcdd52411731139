package sweep

import "testing"

// TestGridDPEP: DP and EP lists are grid axes after TP (empty means {1}),
// and an instance of the grid has TP x DP GPUs.
func TestGridDPEP(t *testing.T) {
	g := Grid{GPUs: []string{"h200"}, TP: []int{2, 4}, DP: []int{1, 2}, EP: []int{1, 8}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{8192}}
	if g.Size() != 8 {
		t.Fatalf("size %d, want 2 x 2 x 2 = 8", g.Size())
	}
	cs := g.Configs()
	i := 0
	for _, tp := range g.TP {
		for _, dp := range g.DP {
			for _, ep := range g.EP {
				c := cs[i]
				if c.Index != i || c.TP != tp || c.DP != dp || c.EP != ep {
					t.Errorf("config %d = %+v, want tp %d dp %d ep %d", i, c, tp, dp, ep)
				}
				if c.GPUsPerInstance() != tp*dp {
					t.Errorf("config %d: %d GPUs per instance, want %d", i, c.GPUsPerInstance(), tp*dp)
				}
				i++
			}
		}
	}
	bad := g
	bad.EP = []int{0}
	if _, err := bad.resolve(nil); err == nil || err.Error() != "ep: 0: must be >= 1" {
		t.Errorf("ep 0: error %v", err)
	}
}
