package pipeline

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// PoolError is a pool of a disaggregated deployment that cannot be
// prepared: Pool is "prefill" or "decode", Err the reason (a
// *settings.FieldError naming the setting, for errors.As).
type PoolError struct {
	Pool string
	Err  error
}

func (e *PoolError) Error() string { return "disaggregation." + e.Pool + ": " + e.Err.Error() }
func (e *PoolError) Unwrap() error { return e.Err }

// PoolInfo is a prepared pool as a result names it.
type PoolInfo struct {
	Replicas, TP int
	GPU          string
	// Prepared is the pool's priced and sized deployment.
	Prepared *sim.Prepared
}

// PrepareDisagg prepares both pools of d's disaggregated deployment (each
// pool its own deployment: settings.Deployment.PoolDeployment) and the
// engine configuration that runs them: the prefill pool's front-end delay
// and a KV transfer sized for the decode pool's layout. g is the deployment's
// GPU, a pool's own GPU name is resolved in the catalog.
func PrepareDisagg(m *model.Config, g *hardware.GPU, d settings.Deployment) (pools [2]PoolInfo, cfg sim.Config, err error) {
	dis := d.Disaggregation
	if d.Serving.Speculative.On() {
		return pools, cfg, &settings.FieldError{Key: "serving.speculative.method", Reason: "speculative decoding is not modelled with disaggregated pools yet; leave it empty or drop disaggregation"}
	}
	for i, pl := range []struct {
		name string
		p    settings.Pool
	}{{"prefill", dis.Prefill}, {"decode", dis.Decode}} {
		pd := d.PoolDeployment(pl.p)
		pg := g
		if pl.p.GPU != "" {
			if pg, err = hardware.Resolve(pl.p.GPU); err != nil {
				return pools, cfg, &CatalogError{Key: "disaggregation." + pl.name + ".gpu", Err: err}
			}
		}
		prep, err := sim.Prepare(sim.Deployment{Model: m, GPU: pg, Settings: pd, FullKVCache: true})
		if err != nil {
			return pools, cfg, &PoolError{Pool: pl.name, Err: err}
		}
		pools[i] = PoolInfo{Replicas: pd.Replicas, TP: pd.TP, GPU: pg.Name, Prepared: prep}
	}
	// Both pools' KV blocks are held in memory together.
	total := 0
	for _, pl := range pools {
		total += pl.Replicas * pl.Prepared.Scheduler.NumGPUBlocks
	}
	if total > limits.MaxKVBlocksTotal {
		return pools, cfg, &settings.FieldError{Key: "disaggregation.decode.replicas", Reason: fmt.Sprintf(
			"the pools hold %d KV blocks in all (replicas x blocks per instance); at most %d", total, limits.MaxKVBlocksTotal)}
	}
	bw, lat, err := dis.KVTransfer.Resolve()
	if err != nil {
		return pools, cfg, &settings.FieldError{Key: "disaggregation.kv_transfer.link", Reason: err.Error(), Err: err}
	}
	pre, dec := pools[0].Prepared, pools[1].Prepared
	pd, dd := d.PoolDeployment(dis.Prefill), d.PoolDeployment(dis.Decode)
	cfg = sim.Config{
		FrontendDelay: pre.FrontendDelay,
		Disagg: &sim.Disagg{
			Prefill:         sim.Pool{Scheduler: pre.Scheduler, StepModel: pre.Step, Replicas: pd.Replicas, Router: pd.Router, StateBlocksPerRequest: pre.StateBlocksPerRequest},
			Decode:          sim.Pool{Scheduler: dec.Scheduler, StepModel: dec.Step, Replicas: dd.Replicas, Router: dd.Router, StateBlocksPerRequest: dec.StateBlocksPerRequest},
			KVBytesPerToken: dec.Step.KVBytesPerTokenPerGPU(),
			LinkBytesPerS:   bw,
			LinkLatency:     sim.FromSeconds(lat),
		},
	}
	if err := cfg.Disagg.Validate(); err != nil {
		return pools, cfg, fmt.Errorf("disaggregation: %w", err)
	}
	return pools, cfg, nil
}

// fillPools names the pools of a disaggregated run's result.
func (p *Plan) fillPools(tp *traces.Pools) {
	if tp == nil {
		return
	}
	for i, st := range []*traces.PoolStats{&tp.Prefill, &tp.Decode} {
		st.Replicas, st.TP, st.GPU = p.Pools[i].Replicas, p.Pools[i].TP, p.Pools[i].GPU
	}
}
