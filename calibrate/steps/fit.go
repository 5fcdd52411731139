package steps

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// Terms are the engine costs a per-step fit identifies, each with its
// cause (hardware.Profile documents the fields they set):
//
//   - StepUS: fixed cost of every step on its critical path (graph replay
//     or launch of the first kernels, the sampler's synchronisation, the
//     copy of sampled tokens back to the host);
//   - GraphLaunchFactor: the share of each kernel's eager launch cost
//     (OpEfficiency.LaunchUS, from the kernel tables) that remains in a
//     CUDA-graph or compiled stream;
//   - PerRequestKVHeadUS: cost per (request, KV head on the GPU) pair in
//     each attention layer beyond the isolated attention kernels'
//     (attention metadata, split plans and their merge, unequal request
//     lengths);
//   - ServingComputeEfficiency: the share of the kernel tables' compute rate
//     sustained in serving (power-limited clocks under back-to-back GEMMs);
//   - ServingAllReduceEfficiency: the all-reduce rate in serving relative to
//     the isolated collective benchmark.
//
// A plain per-request cost (Profile.PerRequestOverheadUS) is not fitted:
// within one tensor-parallel degree it cannot be told from the per
// (request, KV head) cost (the KV heads per GPU are fixed), and across
// degrees the per-pair form is the one that carries over (docs/decisions.md).
type Terms struct {
	StepUS float64 `json:"step_overhead_us"`
	// PerRequestUS is a plain per-request cost, fitted only in its place of
	// PerRequestKVHeadUS when FitOptions.PerRequest asks for it (to compare
	// the two forms across tensor-parallel degrees).
	PerRequestUS               float64 `json:"per_request_overhead_us,omitempty"`
	GraphLaunchFactor          float64 `json:"graph_launch_factor"`
	PerRequestKVHeadUS         float64 `json:"per_request_kv_head_us"`
	ServingComputeEfficiency   float64 `json:"serving_compute_efficiency"`
	ServingAllReduceEfficiency float64 `json:"serving_allreduce_efficiency"`
}

// VLLMGraphMaxTokens makes every step of a vLLM v1 profile use the graph
// launch factor (v1 compiles every step and replays CUDA graphs for most).
const VLLMGraphMaxTokens = 1 << 20

// Apply returns a copy of p with the terms set (and GraphMaxTokens set so
// that every step uses the launch factor, as the fit assumed). Zero
// efficiencies mean 1, as in the profile.
func (t Terms) Apply(p *hardware.Profile) *hardware.Profile {
	c := t.ApplyCarried(p)
	c.ServingComputeEfficiency = t.ServingComputeEfficiency
	c.ServingAllReduceEfficiency = t.ServingAllReduceEfficiency
	return c
}

// ApplyCarried returns a copy of p with only the terms that carry across
// GPUs set: the fixed step cost, the launch share left under CUDA graphs
// and the cost per (request, KV head), and no plain per-request cost. The
// serving compute and all-reduce efficiencies stay p's: they depend on the
// GPU's power limit and on the collective the engine runs on it.
func (t Terms) ApplyCarried(p *hardware.Profile) *hardware.Profile {
	c := p.Clone()
	c.StepOverheadUS = t.StepUS
	c.GraphLaunchFactor = t.GraphLaunchFactor
	c.PerRequestOverheadUS = t.PerRequestUS
	c.PerRequestKVHeadUS = t.PerRequestKVHeadUS
	c.GraphMaxTokens = VLLMGraphMaxTokens
	return c
}

// KernelPathTerms are the terms that belong to the attention kernel path
// the fitted GPU's architecture takes (hardware.KernelPathTerms): the cost
// per (request, KV head).
func (t Terms) KernelPathTerms() hardware.KernelPathTerms {
	return hardware.KernelPathTerms{PerRequestKVHeadUS: t.PerRequestKVHeadUS}
}

// String lists the terms with their units.
func (t Terms) String() string {
	per := fmt.Sprintf("per (request, KV head, layer) %.4f us", t.PerRequestKVHeadUS)
	if t.PerRequestUS != 0 {
		per = fmt.Sprintf("per request %.2f us", t.PerRequestUS)
	}
	return fmt.Sprintf("step %.1f us, graph launch factor %.3f, %s, serving compute efficiency %.3f, serving all-reduce efficiency %.3f",
		t.StepUS, t.GraphLaunchFactor, per, eff1(t.ServingComputeEfficiency), eff1(t.ServingAllReduceEfficiency))
}

// eff1 reads an unset (0) efficiency as 1.
func eff1(e float64) float64 {
	if e == 0 {
		return 1
	}
	return e
}

// Setup names what a per-step table was measured on.
type Setup struct {
	Model *model.Config
	// GPU carries the kernel-calibrated profile the engine terms add to.
	GPU  *hardware.GPU
	Step roofline.StepOptions
}

// NewModel builds the step model of s with the engine terms of t.
func (s Setup) NewModel(t Terms) (*roofline.StepModel, error) {
	g := *s.GPU
	g.Profile = t.Apply(s.GPU.EffectiveProfile())
	return roofline.NewStepModel(s.Model, &g, s.Step)
}

// withoutSync returns s with its GPU's profile carrying no wait for the
// last rank at a collective (AllReduceSyncUS 0).
func (s Setup) withoutSync() Setup {
	g := *s.GPU
	p := s.GPU.EffectiveProfile().Clone()
	p.AllReduceSyncUS = 0
	g.Profile = p
	s.GPU = &g
	return s
}

// Dataset is one per-step table and what it was measured on.
type Dataset struct {
	Table *Table
	Setup Setup
}

// FitResult is a fit of the engine terms to one or more tables.
type FitResult struct {
	Terms Terms `json:"terms"`
	// Unidentified names the terms the tables cannot identify (left at
	// their neutral value): the all-reduce efficiency without all-reduces
	// (TP 1).
	Unidentified []string `json:"unidentified,omitempty"`
	// Train holds each fitted table predicted with the fitted terms.
	Train []*Report `json:"train"`
}

// LossScale is the relative error (0.05 = 5%) at which the fit's soft-L1
// loss turns from quadratic to linear, so a few steps the engine stalled
// on (a 2x step among its neighbours) do not steer the terms.
const LossScale = 0.05

// FitOptions changes the form of a fit.
type FitOptions struct {
	// PerRequest fits a plain cost per request (Terms.PerRequestUS) in
	// place of the cost per (request, KV head). Within one tensor-parallel
	// degree the two fit alike; across degrees they differ by the ratio of
	// KV heads per GPU, which is how the data tell them apart.
	PerRequest bool
}

// FitWith identifies Terms from the per-step tables ds.
//
// Every term enters the step time linearly once the kernels are priced:
//
//	step = K + StepUS + f L + PerRequestKVHeadUS P + g C + h A
//
// with K the kernels' time, L their summed launch costs, P the (request,
// KV head) pairs times the layers, C the compute-bound operators' time, A the all-reduce
// time, f the launch factor and ServingComputeEfficiency = 1/(1+g),
// ServingAllReduceEfficiency = 1/(1+h). The fit is a box-constrained
// weighted linear least squares (costs >= 0, f in [0, 1], g, h >= 0, so
// every efficiency stays <= 1) on the relative error, iterated (IRLS) to a
// soft-L1 loss. Each step kind (prefill-only, decode-only, mixed) of each
// table weighs the same in total, so the many decode steps do not drown
// the few prefill ones. The kernel efficiencies are not touched: they come
// from the kernel tables only. The reported errors are those of the full
// step model with the fitted terms.
// o changes the form of the fit.
func FitWith(o FitOptions, ds ...Dataset) (*FitResult, error) {
	if len(ds) == 0 {
		return nil, fmt.Errorf("fit: no tables")
	}
	var (
		X           [][]float64
		y, meas, w0 []float64
		anyComm     bool
	)
	for _, d := range ds {
		t := d.Table
		// The kernel-only model: no engine terms and every launch at full
		// cost, so OverheadS is the launch sum L and the rest the kernels';
		// without the ranks' wait at each collective, so CommS is the
		// all-reduce time A the efficiency scales. The wait
		// (hardware.Profile.AllReduceSyncUS, fitted elsewhere) is a fixed
		// part of each step: the model with it minus the model without.
		base, err := d.Setup.withoutSync().NewModel(Terms{GraphLaunchFactor: 1})
		if err != nil {
			return nil, err
		}
		synced, err := d.Setup.NewModel(Terms{GraphLaunchFactor: 1})
		if err != nil {
			return nil, err
		}
		cs, csSync := roofline.NewCachedStep(base), roofline.NewCachedStep(synced)
		kvHeads, layers := base.KVHeadsPerGPU(), base.Model().NumLayers
		kindN := map[Kind]int{}
		for _, r := range t.Rows {
			kindN[r.Kind()]++
		}
		for _, r := range t.Rows {
			in := Batch(r)
			c := cs.Cost(&in)
			k := (c.ComputeS + c.MemoryS + c.CommS) * 1e3
			if !(k > 0) || math.IsInf(k, 0) {
				return nil, fmt.Errorf("%s:%d: cannot price the step", t.Name, r.Line)
			}
			anyComm = anyComm || c.CommS > 0
			wait := (csSync.Cost(&in).CommS - c.CommS) * 1e3
			meas = append(meas, r.LatencyMS)
			y = append(y, r.LatencyMS-k-wait)
			pairs := float64((r.PrefillRequests + r.DecodeRequests) * kvHeads * layers)
			if o.PerRequest {
				pairs = float64(r.PrefillRequests + r.DecodeRequests)
			}
			X = append(X, []float64{1e-3, c.OverheadS * 1e3, pairs * 1e-3, c.ComputeS * 1e3, c.CommS * 1e3})
			w0 = append(w0, 1/(r.LatencyMS*r.LatencyMS*float64(kindN[r.Kind()]*len(ds))))
		}
	}
	lo := []float64{0, 0, 0, 0, 0}
	hi := []float64{math.Inf(1), 1, math.Inf(1), math.Inf(1), math.Inf(1)}
	res := &FitResult{}
	if !anyComm {
		hi[4] = 0
		res.Unidentified = append(res.Unidentified, "serving_allreduce_efficiency (no all-reduce at tp 1)")
	}
	w := append([]float64(nil), w0...)
	var b []float64
	for it := 0; it < 50; it++ {
		nb := boxLSQ(X, y, w, lo, hi)
		done := b != nil && maxRelChange(b, nb) < 1e-7
		b = nb
		if done {
			break
		}
		for i := range w {
			rel := (y[i] - dot(X[i], b)) / meas[i] / LossScale
			w[i] = w0[i] / math.Sqrt(1+rel*rel)
		}
	}
	res.Terms = Terms{StepUS: b[0], GraphLaunchFactor: b[1], PerRequestKVHeadUS: b[2],
		ServingComputeEfficiency: 1 / (1 + b[3]), ServingAllReduceEfficiency: 1 / (1 + b[4])}
	if o.PerRequest {
		res.Terms.PerRequestUS, res.Terms.PerRequestKVHeadUS = b[2], 0
	}
	for _, d := range ds {
		m, err := d.Setup.NewModel(res.Terms)
		if err != nil {
			return nil, err
		}
		rep, err := Predict(d.Table, m)
		if err != nil {
			return nil, err
		}
		res.Train = append(res.Train, rep)
	}
	return res, nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func maxRelChange(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i])/math.Max(math.Abs(a[i]), 1e-9))
	}
	return m
}
