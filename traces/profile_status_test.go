package traces

import (
	"encoding/json"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// gpu_profile_status follows gpu_profile; a result that simulated nothing
// (zero status, sim observe) leaves it out.
func TestResultProfileStatus(t *testing.T) {
	for _, tc := range []struct {
		st   hardware.ProfileStatus
		want string
	}{{hardware.StatusDefaults, "defaults"}, {hardware.StatusBorrowed("h100"), "borrowed:h100"}, {hardware.ProfileStatus{}, ""}} {
		r := NewResult(RunInfo{GPU: "l4", Profile: "x", ProfileStatus: tc.st}, Summary{}, nil)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got, ok := m["gpu_profile_status"]
		if tc.want == "" {
			if ok {
				t.Errorf("zero status written as %v", got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("gpu_profile_status %v, want %q", got, tc.want)
		}
	}
}
