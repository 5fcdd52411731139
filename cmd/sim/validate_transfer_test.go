package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestValidateKernelsTransfer: h100's vLLM 0.24.0 tables priced by its
// vLLM 0.14.0 profile (--profile-engine) are held out, except all-reduce
// (the GPU's NCCL table is the same bytes the profile was fitted on).
func TestValidateKernelsTransfer(t *testing.T) {
	db := shareddata.Path(t, "aic")
	for _, tc := range []struct {
		extra         []string
		wantProfile   string
		heldOutFamily bool
	}{
		{[]string{"--profile-engine", "vllm@0.14.0"}, "h100 vllm-0.14.0 kernels", true},
	} {
		args := append([]string{"validate", "kernels", "--gpu", "h100", "--aic", db, "--engine", "vllm@0.24.0", "--json", "-q"}, tc.extra...)
		code, stdout, stderr := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.extra, code, stderr)
		}
		var rep transferReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Profile != tc.wantProfile || len(rep.Families) == 0 {
			t.Fatalf("%v: profile %q, %d families; want %q", tc.extra, rep.Profile, len(rep.Families), tc.wantProfile)
		}
		for _, f := range rep.Families {
			wantTraining := !tc.heldOutFamily || strings.HasPrefix(f.Family, kernels.FamilyAllReducePrefix)
			if f.Training != wantTraining || f.N == 0 {
				t.Errorf("%v: %s training %v (n %d), want %v", tc.extra, f.Family, f.Training, f.N, wantTraining)
			}
		}
	}
}
