package pipeline

import (
	"context"

	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Source is a request source that names its clients (the names a
// Request.Client indexes); *workload.Generator is one.
type Source interface {
	sim.Source
	ClientNames() []string
}

var _ Source = (*workload.Generator)(nil)

// Source builds the plan's request source: the trace of Options.Trace when
// given, else the spec's clients (their rates scaled to Options.Rate when
// set), seeded with the spec's seed. Errors name the workload field.
func (p *Plan) Source() (*workload.Generator, error) {
	if p.opts.Trace != "" {
		tr, err := workload.LoadTrace(p.opts.Trace)
		if err != nil {
			return nil, err
		}
		return workload.NewTraceGenerator(tr, p.Spec.Seed), nil
	}
	sp := p.Spec
	if p.opts.Rate != nil {
		sp = sp.WithRate(*p.opts.Rate)
	}
	sp.ApplyDefaults()
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	return workload.NewGenerator(sp, p.Spec.Seed)
}

// Requests is the spec whose clients Source generates: Spec with
// Options.Rate applied. Callers estimate a run's size from it.
func (p *Plan) Requests() *workload.Spec {
	if p.opts.Rate != nil {
		return p.Spec.WithRate(*p.opts.Rate)
	}
	return p.Spec
}

// RunOptions shape one Run.
type RunOptions struct {
	// Percentiles are the result's percentiles (nil: the defaults,
	// traces.DefaultPercentiles).
	Percentiles []float64
	// Goodput is the SLO set a request must meet to count as good; the zero
	// value reports no goodput.
	Goodput traces.Goodput
	// StepTrace sends one StepRecord per forward pass to the sink.
	StepTrace bool
	// OnProgress, when set, is called with the running count of finished
	// requests (sim.Config.OnProgress).
	OnProgress func(done int64)
}

// Outcome is a finished run: the engine's result and the assembled result
// in vllm bench serve's schema.
type Outcome struct {
	Sim    *sim.Result
	Result *traces.Result
}

// Run runs the plan's engine on src, streaming its records to sink (nil
// discards them), and assembles the result. ctx stops the run (the engine
// checks it as it goes): the error is then ctx's cause and there is no
// outcome. The plan is not changed; a plan may run more than once.
func (p *Plan) Run(ctx context.Context, src Source, sink sim.Sink, o RunOptions) (*Outcome, error) {
	cfg := p.Config
	cfg.Clients = src.ClientNames()
	cfg.StepTrace = o.StepTrace
	cfg.OnProgress = o.OnProgress
	cfg.Context = ctx
	if sink == nil {
		sink = sim.DiscardSink{}
	}
	var good *GoodputSink
	if o.Goodput.Enabled() {
		good = &GoodputSink{Sink: sink, SLO: o.Goodput}
		sink = good
	}
	var spec *workload.Spec // a trace replay's clients are all open loop
	if p.opts.Trace == "" {
		spec = p.Spec
	}
	load := NewLoadSink(sink, spec)
	res, err := sim.Run(cfg, src, load)
	if ctx != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	p.fillPools(res.Pools)
	m := Measures{Percentiles: o.Percentiles, MaxConcurrentRequests: res.PeakInSystem, Pools: res.Pools,
		MaxOutputTokensPerS: res.MaxOutputTokensPerS, Notes: p.Notes, Load: load.Load(res), Speculative: res.Speculative}
	if good != nil {
		m.Goodput, m.GoodRequests = good.SLO, good.Good
	}
	return &Outcome{Sim: res, Result: NewResult(p.Info(), res.Summary, m)}, nil
}

// Info is the deployment a result names: the resolved model and GPU, the
// TP degree, the replicas and the GPU profile's label.
func (p *Plan) Info() traces.RunInfo {
	s := &p.Settings
	replicas := s.Replicas
	if p.Config.Disagg != nil {
		replicas = p.Pools[0].Replicas + p.Pools[1].Replicas
	}
	return traces.RunInfo{Model: s.Model, GPU: s.GPU, TP: s.TP, Replicas: replicas,
		Profile: ProfileLabel(p.GPU.EffectiveProfile()), ProfileStatus: p.GPU.EffectiveProfile().Status()}
}

// GoodputSink counts the request records that meet the SLOs (Good) on
// their way to the inner sink.
type GoodputSink struct {
	sim.Sink
	SLO  traces.Goodput
	Good int64
}

func (g *GoodputSink) Request(r *traces.RequestRecord) error {
	if g.SLO.Good(r) {
		g.Good++
	}
	return g.Sink.Request(r)
}
