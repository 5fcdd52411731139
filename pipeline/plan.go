package pipeline

import (
	"fmt"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// Options shape Resolve beyond the spec's settings. The zero value resolves
// the spec's model and GPU in their catalogs and generates its clients'
// requests at their own rates.
type Options struct {
	// Model, when not nil, is the resolved model; spec.Model is then not
	// looked up (the web view resolves catalog names only, never paths).
	Model *model.Config
	// GPU, when not nil, is the resolved GPU; spec.GPU is then not looked up.
	GPU *hardware.GPU
	// Workload names the workload the spec came from (a file, an example),
	// as run.json records it; "" for none.
	Workload string
	// Trace is the path of a request trace (CSV, JSON Lines or Parquet) to
	// replay instead of the spec's clients; "" generates the clients.
	Trace string
	// Rate, when not nil, scales the spec's open-loop arrival rates to this
	// total, in requests/s (workload.Spec.WithRate).
	Rate *float64
	// WeightsOrigin names where the weights setting came from ("--weights",
	// "SIM_WEIGHTS") in the note a weights override adds; "" reads
	// "weights", or "weights in FILE" with Workload set.
	WeightsOrigin string
}

// Settings are run.json's "config": the deployment settings after
// precedence, with the model, GPU and precisions as resolved and the KV
// capacity and model length as derived, plus the seed, the cut-off and
// where the requests and the GPU profile came from.
type Settings struct {
	settings.Deployment
	Seed     uint64            `json:"seed"`
	Duration settings.Duration `json:"duration"`
	// NumGPUBlocksPinned is true when the KV capacity was given
	// (serving.num_gpu_blocks), not derived from memory.
	NumGPUBlocksPinned bool `json:"num_gpu_blocks_pinned"`
	// Profile is the GPU profile's source (how it was obtained).
	Profile string `json:"gpu_profile,omitempty"`
	// ProfileStatus says how the GPU was priced: calibrated or defaults.
	ProfileStatus hardware.ProfileStatus `json:"gpu_profile_status,omitzero"`
	Workload      string                 `json:"workload,omitempty"`
	Trace         string                 `json:"trace,omitempty"`
}

// Plan is a resolved simulation, ready to Run: nothing has been generated
// or written yet.
type Plan struct {
	// Spec is the workload spec as given (settings after the caller's
	// precedence); Source applies Options.Rate to a copy.
	Spec     *workload.Spec
	Model    *model.Config
	GPU      *hardware.GPU
	Prepared *sim.Prepared
	// Config is the engine configuration; Run fills Clients, StepTrace,
	// OnProgress and Context.
	Config sim.Config
	// Settings is what run.json records as "config".
	Settings Settings
	// WeightsNote says when an explicit weight precision replaces the one a
	// quantised checkpoint declares ("" otherwise); Notes carries it too.
	WeightsNote string
	// Notes are remarks on the setup that the result carries: WeightsNote
	// and the MoE kernel path serving.moe_kernel auto chose.
	Notes []string
	// ModelNotes are the model's pricing notes for this run
	// (model.Config.PricingNotesFor), also in Notes.
	ModelNotes []string
	// Pools are the prefill and decode pools of a disaggregated deployment
	// (Config.Disagg set); zero otherwise. Prepared is then the decode
	// pool's.
	Pools [2]PoolInfo
	opts  Options
}

// CatalogError is a model or GPU name (or file) its catalog could not
// resolve. Key is the setting's key ("model", "gpu").
type CatalogError struct {
	Key string
	Err error
}

func (e *CatalogError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *CatalogError) Unwrap() error { return e.Err }

// Resolve resolves spec's model and GPU (unless opts gives them), prices
// and sizes the deployment (sim.Prepare) and builds the engine
// configuration: its replicas behind its router, the cut-off at
// spec.Duration and the GPU profile's front-end delay. Errors name the
// setting: a *CatalogError for the model or GPU, a *settings.FieldError or
// *scheduler.FieldError for a bad value. Nothing is read but the catalogs
// (and the model or GPU files spec names).
func Resolve(spec *workload.Spec, opts Options) (*Plan, error) {
	m := opts.Model
	if m == nil {
		var err error
		if m, err = model.Resolve(spec.Model); err != nil {
			return nil, &CatalogError{Key: "model", Err: err}
		}
	}
	g := opts.GPU
	if g == nil {
		var err error
		if g, err = hardware.Resolve(spec.GPU); err != nil {
			return nil, &CatalogError{Key: "gpu", Err: err}
		}
	}
	var pools [2]PoolInfo
	var prep *sim.Prepared
	var cfg sim.Config
	var err error
	if spec.Disaggregation.Enabled() {
		if err := spec.Deployment.Validate(); err != nil {
			return nil, err
		}
		// The decode pool's sizing is the one run.json records.
		pools, cfg, err = PrepareDisagg(m, g, spec.Deployment)
		prep = pools[1].Prepared
	} else {
		prep, cfg, err = Prepare(sim.Deployment{Model: m, GPU: g, Settings: spec.Deployment})
	}
	if err != nil {
		return nil, err
	}
	g = prep.GPU // with the kernel profile of the deployment's engine release
	cfg.Horizon = sim.FromSeconds(spec.Duration.Seconds())
	cfg = cfg.WithSpeculationSeed(spec.Seed)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st := Settings{Deployment: spec.Deployment, Seed: spec.Seed, Duration: spec.Duration,
		NumGPUBlocksPinned: prep.Pinned, Profile: g.EffectiveProfile().Summary(), ProfileStatus: g.EffectiveProfile().Status(),
		Workload: opts.Workload, Trace: opts.Trace}
	so := prep.Step.Options()
	st.Model, st.GPU = m.Name, g.Name
	st.Weights, st.KVCacheDType, st.ActDType = roofline.DType(so.WeightDType), roofline.DType(so.KVDType), roofline.DType(so.ActDType)
	st.Serving.Config = prep.Scheduler
	st.Serving.AsyncScheduling = engines.AsyncModeOf(prep.AsyncScheduling)
	p := &Plan{Spec: spec, Model: m, GPU: g, Prepared: prep, Config: cfg, Settings: st, Pools: pools, opts: opts}
	p.Notes = append(p.Notes, spec.Notes...)
	if p.WeightsNote = p.weightsNote(); p.WeightsNote != "" {
		p.Notes = append(p.Notes, p.WeightsNote)
	}
	if n := prep.ProfileNote; n != "" {
		p.Notes = append(p.Notes, n)
	}
	if n := prep.MoEKernelNote; n != "" {
		p.Notes = append(p.Notes, n)
	}
	if n := prep.HybridNote; n != "" {
		p.Notes = append(p.Notes, n)
	}
	if n := prep.MixerKernelNote; n != "" {
		p.Notes = append(p.Notes, n)
	}
	if n := prep.SpeculativeNote; n != "" {
		p.Notes = append(p.Notes, n)
	}
	// What the model's loader read but the step model leaves out or
	// simplifies (model.Config.Notes).
	p.ModelNotes = m.PricingNotesFor(spec.Deployment.Serving.Speculative.Method == roofline.SpecMTP)
	p.Notes = append(p.Notes, p.ModelNotes...)
	return p, nil
}

// weightsNote says when an explicit weight precision replaces the one a
// quantised checkpoint declares ("" otherwise).
func (p *Plan) weightsNote() string {
	q := p.Model.Quant
	w := p.Spec.Weights
	if q == nil || w == "" {
		return ""
	}
	origin := p.opts.WeightsOrigin
	if origin == "" {
		origin = "weights"
	}
	if origin == "weights" && p.opts.Workload != "" {
		origin = "weights in " + p.opts.Workload
	}
	return fmt.Sprintf("%s = %s overrides the checkpoint's quantisation (%s) for every module", origin, w, q)
}

// Prepare prices and sizes d (sim.Prepare) and returns the engine
// configuration of d's replicas behind d's router (Engine). Errors are
// sim.Prepare's.
func Prepare(d sim.Deployment) (*sim.Prepared, sim.Config, error) {
	prep, err := sim.Prepare(d)
	if err != nil {
		return nil, sim.Config{}, err
	}
	return prep, Engine(prep, d.Settings.Replicas, d.Settings.Router), nil
}

// Engine is the engine configuration of a prepared deployment: its
// scheduler (KV capacity included) and step model, max(replicas, 1)
// instances behind router ("" is round-robin), and the API front end's
// delay (an engine term, from the engine profile through the GPU profile).
// Clients, Horizon and the run's hooks are left to the caller.
func Engine(prep *sim.Prepared, replicas int, router routing.Router) sim.Config {
	cfg := sim.Config{
		Scheduler:             prep.Scheduler,
		StateBlocksPerRequest: prep.StateBlocksPerRequest,
		Window:                prep.Window,
		StepModel:             prep.Step,
		Replicas:              max(replicas, 1),
		Router:                router,
		FrontendDelay:         prep.FrontendDelay,
		AsyncScheduling:       prep.AsyncScheduling,
		ReloadBlockSeconds:    prep.ReloadBlockSeconds,
	}
	if prep.Speculative != nil {
		s := *prep.Speculative // the caller sets its seed
		cfg.Speculative = &s
	}
	return cfg
}

// ProfileLabel is a one-line description of a GPU profile, as a result's
// gpu_profile carries it; `sim gpus --json` shows its full source.
func ProfileLabel(p *hardware.Profile) string {
	if d := p.BorrowedFrom; d != "" {
		l := "borrowed from " + d
		if p.Engine != "" {
			l += " (calibrated for " + p.Engine + ")"
		}
		return l + " (source: sim gpus --json)"
	}
	if !p.Calibrated {
		return "built-in defaults (uncalibrated)"
	}
	l := "calibrated"
	if p.Engine != "" {
		l += " for " + p.Engine
	}
	return l + " (source: sim gpus --json)"
}
