package workload

import (
	"strings"
	"testing"
)

// TestDeploymentEPDP: expert and data parallelism default to 1 and are
// checked like the other degrees, naming the key.
func TestDeploymentEPDP(t *testing.T) {
	d := DefaultDeployment()
	if d.EP != 1 || d.DP != 1 {
		t.Fatalf("defaults ep %d dp %d, want 1 and 1", d.EP, d.DP)
	}
	for _, tt := range []struct {
		set  func(*Deployment)
		want string
	}{
		{func(d *Deployment) { d.EP = 0 }, "ep: "},
		{func(d *Deployment) { d.DP = -1 }, "dp: "},
		{func(d *Deployment) { d.EP = 1 << 20 }, "ep: "},
	} {
		d := DefaultDeployment()
		tt.set(&d)
		err := d.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error %v, want one starting %q", err, tt.want)
		}
	}
	d.EP, d.DP, d.TP = 16, 4, 4
	if err := d.Validate(); err != nil {
		t.Errorf("tp 4 dp 4 ep 16: %v", err)
	}
}
