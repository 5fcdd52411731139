package main

import (
	"strings"
	"testing"
)

// Bad input to calibrate mixers: one error line naming the flag, a usage
// exit code, nothing written.
func TestCalibrateMixersBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "mixers", "--aic", "x", "--engine", "vllm@0.24.0"}, "--gpu"},
		{[]string{"calibrate", "mixers", "--gpu", "b200", "--engine", "vllm@0.24.0"}, "--aic"},
		{[]string{"calibrate", "mixers", "--gpu", "b200", "--aic", "x", "--engine", "vllm@0.24.0", "--folds", "1"}, "--folds"},
		{[]string{"calibrate", "mixers", "--gpu", "b200", "--aic", "x", "--engine", "llama.cpp@b6989"}, "--engine"},
		{[]string{"calibrate", "mixers", "--gpu", "b200", "--aic", t.TempDir(), "--engine", "vllm@0.24.0"}, "--aic"},
	} {
		code, out, errOut := cli(t, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one error line naming %s", tc.args, code, out, errOut, tc.want)
		}
	}
}
