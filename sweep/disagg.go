package sweep

import (
	"errors"
	"math"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
)

// A grid that sweeps disaggregation.prefill.replicas and
// disaggregation.decode.replicas (and each pool's tp and gpu) searches
// disaggregated deployments beside aggregated ones in the same table: a row
// whose pools both have replicas is one xPyD unit (x prefill and y decode
// instances) that the search loads as a whole, exactly as it loads one
// aggregated instance; replicas then counts such units for the target
// rate, and the cost is each pool's GPUs at its own GPU's price. Rows with
// no replicas in either pool are aggregated; one pool without replicas is
// not a deployment (skipped, with the reason).

// prepareConfig applies c's swept settings to dep and prepares the
// deployment they make with its probe configuration: one aggregated instance
// (probeConfig), or one disaggregated unit, whose GPUs it records in c.
// conc is true for a concurrency sweep, which runs aggregated deployments
// only.
func (o *Options) prepareConfig(c *Config, dep sim.Deployment, conc bool) (*sim.Prepared, sim.Config, error) {
	if err := c.apply(&dep); err != nil {
		return nil, sim.Config{}, err
	}
	if !dep.Settings.Disaggregation.Enabled() {
		prep, err := sim.Prepare(dep)
		if err != nil {
			return nil, sim.Config{}, err
		}
		return prep, probeConfig(prep), nil
	}
	if conc {
		return nil, sim.Config{}, errors.New("disaggregation: a concurrency sweep (closed-loop workload) searches aggregated deployments only")
	}
	if err := dep.Settings.Validate(); err != nil {
		return nil, sim.Config{}, err
	}
	pools, cfg, err := pipeline.PrepareDisagg(dep.Model, dep.GPU, dep.Settings)
	if err != nil {
		return nil, cfg, err
	}
	d := *cfg.Disagg
	d.Prefill.StepModel = sharedStep(pools[0].Prepared)
	d.Decode.StepModel = sharedStep(pools[1].Prepared)
	cfg.Disagg = &d
	c.unitGPUs = 0
	for _, pl := range pools {
		c.unitGPUs += pl.Replicas * pl.TP
	}
	return pools[1].Prepared, cfg, nil
}

// unitPrice is the mean price per GPU of c's disaggregated unit, US$/hour:
// each pool's GPUs at its own GPU's price (NaN when one has none).
func (o *Options) unitPrice(c Config, dep sim.Deployment) float64 {
	if err := c.apply(&dep); err != nil {
		return math.NaN()
	}
	var cost float64
	for _, p := range []settings.Pool{dep.Settings.Disaggregation.Prefill, dep.Settings.Disaggregation.Decode} {
		pd := dep.Settings.PoolDeployment(p)
		g := dep.GPU
		name := g.Name
		if p.GPU != "" {
			var err error
			if g, err = hardware.Resolve(p.GPU); err != nil {
				return math.NaN()
			}
			name = p.GPU
		}
		price, ok := o.price(name, g)
		if !ok {
			return math.NaN()
		}
		cost += float64(pd.Replicas*pd.TP) * price
	}
	return cost / float64(c.GPUsPerInstance())
}

// sharedStep is probeStep for a pool: its step model behind one
// roofline.CachedStep shared by a configuration's probes.
func sharedStep(prep *sim.Prepared) sim.StepModel {
	if prep.Step.DP() > 1 {
		return prep.Step
	}
	return roofline.NewCachedStep(prep.Step)
}
