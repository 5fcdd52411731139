package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A disaggregated run's --out directory adds request_pools.csv, one row per
// completed request; an aggregated run's has none.
func TestRequestPoolsTrace(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		pools bool
	}{{[]string{"--prefill-replicas=1", "--decode-replicas=2"}, true}, {nil, false}} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, errOut := cli(t, append([]string{"run", "--quiet", "--workload", wl, "--out", out}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(out, "request_pools.csv"))
		if !c.pools {
			if err == nil {
				t.Fatal("an aggregated run wrote request_pools.csv")
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if err != nil || len(lines) != 5 || !strings.HasPrefix(lines[0], "id,prefill_instance,decode_instance,") {
			t.Fatalf("request_pools.csv: %v\n%s", err, b)
		}
	}
}
