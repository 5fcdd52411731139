package main

import (
	"strings"
	"testing"
)

// A --backend-version that is not a vLLM release is one error naming the
// flag, a non-zero exit and no output, before any row is read or fitted.
func TestBackendVersionFlag(t *testing.T) {
	for _, cmd := range [][]string{
		{"validate", "serving", "--file", "no-such.csv", "--backend-version", "latest"},
		{"calibrate", "serving", "--file", "no-such.csv", "--backend-version", "latest"},
	} {
		code, out, errOut := cli(t, cmd...)
		if code == 0 || out != "" || !strings.Contains(errOut, "--backend-version") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a non-zero exit naming --backend-version and no output", strings.Join(cmd[:2], " "), code, out, errOut)
		}
	}
}
