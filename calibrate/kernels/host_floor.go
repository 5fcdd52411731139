package kernels

import (
	"fmt"
	"math"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
)

// A kernel table timed eagerly (no CUDA graph; AIConfigurator's vLLM GEMM
// collector does so for block-scaled fp8, collector/vllm/collect_gemm.py
// run_gemm: use_cuda_graph=gemm_type != "fp8_block") measures each call at
// the slower of the GPU and the host that dispatches it: every small call
// takes the same host time, whatever its shape (hardware.OpEfficiency
// BenchHostUS). A fit without that term has to bend a GPU term into a
// constant (a memory curve whose half-efficiency size is a gigabyte), which
// the step model then charges every GEMM of a serving step, where CUDA
// graphs remove the host.
//
// With the host floor, the rows under it show nothing of the GPU's memory
// side or launch cost. Those are held at a reference family of the same
// table, timed with CUDA graphs and fitted first (hostFloorRef): the
// weights stream through the same memory system (as
// roofline.PrequantizedEfficiency reasons), and a dynamic-quantisation
// GEMM launches the same two kernels. The compute curve, depth, input,
// output and L2 terms and the floor are fitted.

// hostFloorRef is the family whose memory curve and launch a host-floor
// fit of GEMM family name holds (hostFloorFit): "gemm_fp8" (per-tensor W8A8,
// the same quantise-then-GEMM pair of kernels) for the other quantised
// formats, "gemm_bf16" (one kernel) for gemm_fp8 or when the table has no
// fp8 family; "" for gemm_bf16, the root, and for other families.
func hostFloorRef(name string, have func(string) bool) string {
	if !strings.HasPrefix(name, FamilyGEMMPrefix) || name == FamilyGEMMPrefix+"bf16" {
		return ""
	}
	if name != FamilyGEMMPrefix+"fp8" && have(FamilyGEMMPrefix+"fp8") {
		return FamilyGEMMPrefix + "fp8"
	}
	if have(FamilyGEMMPrefix + "bf16") {
		return FamilyGEMMPrefix + "bf16"
	}
	return ""
}

// HostFloorChoice reports one GEMM family's choice between its free fit
// and its host-floor fit (hostFloorFit): the robust losses (mean softL1 of
// the log errors, KernelLossScale) of both on every row, and whether the
// floor was kept.
type HostFloorChoice struct {
	Family    string  `json:"family"`
	Reference string  `json:"reference"`
	FreeLoss  float64 `json:"free_loss"`
	FloorLoss float64 `json:"floor_loss"`
	HostUS    float64 `json:"bench_host_us"`
	Kept      bool    `json:"kept"`
}

// hostFloorFit refits family f with a host floor, the memory curve and
// launch held at ref's and the tiling of free, its fit without one, and
// keeps the result when it describes every row at least as well as free
// (robustLoss): it then has three fewer free parameters (the memory
// curve's three and the launch, for the floor) and terms that are
// physical. Only a kept fit is refitted on fitFamily's training split for
// its train and held-out errors. Deterministic.
func hostFloorFit(f opFamily, free familyFit, ref hardware.OpEfficiency, refName string, opts Options) (familyFit, HostFloorChoice, error) {
	ch := HostFloorChoice{Family: f.name, Reference: refName, FreeLoss: robustLoss(f.samples, free.eff)}
	init := free.eff
	init.Memory, init.LaunchUS, init.BenchHostUS = ref.Memory, ref.LaunchUS, 0
	seed := familySeed(opts.Seed, f.name)
	fo := fitOptions{restarts: opts.Restarts, hostFloor: true}
	// The held terms come back through the fit's coordinates within a few
	// ulps; they are stored exactly.
	held := func(r FitResult) hardware.OpEfficiency {
		r.Efficiency.Memory, r.Efficiency.LaunchUS = init.Memory, init.LaunchUS
		return r.Efficiency
	}
	full, err := fitOp(f.samples, init, seed, fo)
	if err != nil {
		return familyFit{}, ch, err
	}
	full.Efficiency = held(full)
	ch.FloorLoss, ch.HostUS = robustLoss(f.samples, full.Efficiency), full.Efficiency.BenchHostUS
	ch.Kept = ch.FloorLoss <= ch.FreeLoss
	out := familyFit{fe: FamilyError{Family: f.name}, eff: full.Efficiency}
	if !ch.Kept {
		return out, ch, nil
	}
	if opts.HoldoutFraction > 0 && len(f.samples) >= 2 {
		tr, ho := split(len(f.samples), opts.HoldoutFraction, seed)
		train, hold := pick(f.samples, tr), pick(f.samples, ho)
		t, err := fitOp(train, init, seed, fo)
		if err != nil {
			return out, ch, err
		}
		out.fe, out.warnings = holdoutErrors(f.name, train, hold, held(t))
	} else {
		out.fe.Train = calibrate.SummarizeAPE(apes(f.samples, full.Efficiency))
	}
	out.warnings = append(out.warnings, boundWarnings(f.name, full.Efficiency)...)
	return out, ch, nil
}

// robustLoss is the fit's objective for efficiency e on samples: the mean
// softL1 (KernelLossScale) of log(predicted/measured).
func robustLoss(samples []Sample, e hardware.OpEfficiency) float64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range samples {
		sum += fit.SoftL1(math.Log(s.Predict(e)/s.Seconds), KernelLossScale)
	}
	return sum / float64(len(samples))
}

// applyHostFloors makes the host-floor choice (hostFloorFit) for every
// GEMM family of fams with a reference family, in fams' order (so a
// reference's own choice is made before it is used), replacing outs[i]
// where the floor is kept. outs[i] is the fit of fams[i].
func applyHostFloors(fams []opFamily, outs []familyFit, opts Options) ([]HostFloorChoice, error) {
	index := map[string]int{}
	for i, f := range fams {
		if o := outs[i]; o.err == nil && !o.skipped {
			index[f.name] = i
		}
	}
	have := func(n string) bool { _, ok := index[n]; return ok }
	var chs []HostFloorChoice
	for i, f := range fams {
		refName := hostFloorRef(f.name, have)
		j, ok := index[refName]
		if _, self := index[f.name]; !ok || !self {
			continue
		}
		o, ch, err := hostFloorFit(f, outs[i], outs[j].eff, refName, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: host floor: %w", f.name, err)
		}
		chs = append(chs, ch)
		if ch.Kept {
			o.warnings = append(o.warnings, fmt.Sprintf("%s: rows timed at a host floor of %.1f us per call: kept it (loss %.4f, %.4f without), memory curve and launch held at %s's",
				f.name, ch.HostUS, ch.FloorLoss, ch.FreeLoss, refName))
			outs[i] = o
		}
	}
	return chs, nil
}
