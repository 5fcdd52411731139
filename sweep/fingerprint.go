package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Fingerprint identifies a sweep: the first 16 hex digits of the SHA-256 of
// everything that determines its rows (workload, model, shared deployment
// settings, grid, SLO, target rate, GPU prices, requests,
// probes, seed), and nothing that does not (jobs, shard, early stopping).
// Shards of one sweep share it; Merge refuses rows that differ.
func (o *Options) Fingerprint() (string, error) {
	var work any
	if o.Workload != nil {
		w := *o.Workload
		w.BaseDir = "" // where the file sits does not change the sweep
		work = w
	}
	base := o.Base
	base.GPU = nil
	doc := struct {
		Workload  any
		Model     any
		Base      any
		Grid      Grid
		SLO       string
		Target    float64
		Costs     map[string]float64
		Requests  int
		Probes    int
		Seed      uint64
		FormatRev int
	}{work, base.Model, base, o.Grid, o.SLO.String(), o.TargetRateRPS, o.GPUCostPerHour, o.Requests, o.probes(), o.Seed, 2}
	data, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}
