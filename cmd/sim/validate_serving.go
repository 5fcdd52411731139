package main

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/engine"
	"github.com/spf13/cobra"
)

type validateServingOptions struct {
	File              string
	RequestsPerClient int
	BenchRequests     float64
	Campaign          string
	KVDType           string
	BackendVersion    string
	Seed              uint64
	JSON              bool
	AllowSkips        bool
}

func newValidateServingCmd(s streams) *cobra.Command {
	o := &validateServingOptions{}
	cmd := &cobra.Command{
		Use:   "serving --file closed_loop_vllm.csv",
		Short: "Simulate measured closed-loop vLLM benchmarks and report TTFT/TPOT errors",
		Long: `Simulate every row of a closed-loop serving benchmark table (AIConfigurator's
e2e format: model_path, system, precision, isl, osl, batch_size = concurrency,
tp_size, silicon_ttft_ms, silicon_tpot_ms): batch_size clients each send a
request of isl prompt tokens and osl output tokens as soon as the previous one
completes, on the row's GPU (with its catalog profile), TP and weight
precision. Reports the error of the mean TTFT and TPOT per row group and
overall (median and p90 absolute percentage error, and the mean signed error).

Each row is simulated in the benchmark's two phases: the burst (every
client's first request sent at t = 0) and the desynchronised steady state
(--requests-per-client requests per client, first requests staggered over one
request lifetime). The prediction is their mean over a benchmark of
--bench-requests-per-client requests per client: the burst weighs 1/k. The
default k was fitted with the engine overheads by sim calibrate serving on
the h100_sxm rows; --json shows both phases per row.

--campaign names the benchmark campaign whose terms price the rows (the
front end's latency per request, the share of GEMM input quantisation fused
away, and the default k): a shipped campaign (closed_loop_vllm, the campaign
behind the e2e tables) or a campaign YAML file; "none" keeps each GPU
profile's own front-end latency and fused share.

Tables are read as AIConfigurator publishes them: moe_tp_size and
moe_ep_size of 0 mean "not set"; a nightly backend_version
(nightly-<sha>) is priced as the newest vLLM release roofsim knows, with a
note; a model_path naming a Hugging Face config.json (or its directory,
relative to the table's directory when not absolute) is loaded, anything
else is looked up in the model catalog. A row that cannot be priced is
named and counted in the summary, and the command then exits non-zero
(unless --allow-skips); it always does when no row could be priced.`,
		Example: "  sim validate serving --file ../shared/data/e2e/closed_loop_vllm.csv",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.File == "" {
				return usageError{fmt.Errorf("--file: required")}
			}
			if o.RequestsPerClient < 1 {
				return fmt.Errorf("--requests-per-client: must be >= 1, got %d", o.RequestsPerClient)
			}
			if !(o.BenchRequests >= 1) {
				return fmt.Errorf("--bench-requests-per-client: must be >= 1, got %g", o.BenchRequests)
			}
			var camp *serving.Campaign
			if o.Campaign != "none" {
				c, err := serving.LoadCampaign(o.Campaign)
				if err != nil {
					return fmt.Errorf("--campaign: %w", err)
				}
				camp = c
				if !cmd.Flags().Changed("bench-requests-per-client") {
					o.BenchRequests = camp.BenchRequestsPerClient
				}
			}
			if err := checkBackendVersion(o.BackendVersion); err != nil {
				return err
			}
			rows, err := aiconfigurator.ReadServing(o.File)
			if err != nil {
				return err
			}
			if err := checkServingRows(o.File, rows, o.RequestsPerClient); err != nil { // calibrate_truth.go
				return err
			}
			rep, err := serving.ValidateDistinct(cmd.Context(), rows, serving.Options{RequestsPerClient: o.RequestsPerClient,
				BenchRequestsPerClient: o.BenchRequests, Campaign: camp, RowRelease: o.BackendVersion, Seed: o.Seed, KVDType: o.KVDType, Model: aiconfigurator.Models(o.File)})
			if err != nil {
				return err
			}
			if o.JSON {
				err = writeJSON(s.out, rep)
			} else {
				err = rep.WriteText(s.out)
			}
			if err != nil {
				return err
			}
			return rep.Check(o.AllowSkips)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "", "closed-loop benchmark table (CSV)")
	f.IntVar(&o.RequestsPerClient, "requests-per-client", 5, "requests each client sends in the steady-state simulation")
	f.Float64Var(&o.BenchRequests, "bench-requests-per-client", serving.DefaultBenchRequestsPerClient, "requests per client of the measured benchmark (the t = 0 burst weighs 1/k)")
	f.StringVar(&o.Campaign, "campaign", "closed_loop_vllm", "benchmark campaign whose terms price the rows: a shipped name, a campaign YAML file, or none")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed")
	f.StringVar(&o.KVDType, "kv-cache-dtype", "", "KV-cache precision for every row (default: the row's precision)")
	f.StringVar(&o.BackendVersion, "backend-version", "", "vLLM release of the rows without a backend_version, which decides their async scheduling (default: the campaign's backend_version, else the GPU profile's release)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&o.AllowSkips, "allow-skips", false, "exit 0 when some rows could not be priced (never when none could)")
	return cmd
}

// checkBackendVersion checks --backend-version of validate and calibrate
// serving: empty, or a vLLM release (engine.ResolveRelease).
func checkBackendVersion(v string) error {
	if v == "" {
		return nil
	}
	if _, err := engine.ResolveRelease(engine.VLLM, v); err != nil {
		return usageError{fmt.Errorf("--backend-version: %w", err)}
	}
	return nil
}
