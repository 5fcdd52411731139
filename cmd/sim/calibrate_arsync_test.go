package main

import (
	"strings"
	"testing"
)

func TestCalibrateARSyncFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "allreduce-sync", "--system", "h100_sxm"}, "--file: required"},
		{[]string{"calibrate", "allreduce-sync", "--file", "x.csv"}, "--system: required"},
		{[]string{"calibrate", "allreduce-sync", "--file", "x.csv", "--system", "h100_sxm", "--runs", "d"}, "--gpu: required with --runs"},
	} {
		code, out, errOut := cli(t, c.args...)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a non-zero exit naming %q", c.args, code, out, errOut, c.want)
		}
	}
}
