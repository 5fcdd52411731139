package sweep

import (
	"bytes"
	"testing"

	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// chatYAML is a small chat workload: Poisson arrivals, ~512-token prompts
// with a shared prefix, ~128-token outputs.
const chatYAML = `
seed: 7
clients:
  - name: chat
    arrival: {process: poisson, rate: 10, num_requests: 500}
    prefix: {groups: 4, tokens: 100}
    prompt_tokens: {dist: lognormal, mean: 400, std: 200, min: 16, max: 4096}
    output_tokens: {dist: lognormal, mean: 128, std: 64, min: 2, max: 1024}
`

func mustSpec(t testing.TB, y string) *workload.Spec {
	t.Helper()
	sp, err := workload.Parse([]byte(y), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func mustModel(t testing.TB, name string) *model.Config {
	t.Helper()
	m, err := model.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smallOptions is the end-to-end sweep of the tests: 2 GPUs x 2 TP of
// Llama-3.1-8B, 2,000 requests a probe, 5 probes.
func smallOptions(t testing.TB) Options {
	t.Helper()
	slo, err := ParseSLO("ttft_p99=500ms,tpot_p99=50ms")
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Workload: mustSpec(t, chatYAML),
		Base: sim.Deployment{
			Model:    mustModel(t, "llama-3.1-8b"),
			Settings: workload.DefaultDeployment(),
		},
		Grid:           Grid{GPUs: []string{"h100", "l40s"}, TP: []int{1, 2}, MaxNumSeqs: []int{256}, MaxNumBatchedTokens: []int{8192}},
		SLO:            slo,
		TargetRateRPS:  40,
		Requests:       2000,
		Probes:         5,
		Jobs:           2,
		Seed:           7,
		GPUCostPerHour: DefaultGPUCostsPerHour(),
	}
}

// parquetRoundTrip writes r as Parquet and reads it back, as the CLI's
// shards and merge do.
func parquetRoundTrip(t testing.TB, r *Result) *Result {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteParquet(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return back
}
