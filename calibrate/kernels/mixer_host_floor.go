package kernels

import "fmt"

// Eagerly timed mixer tables. AIConfigurator's kernel-level MLA collector
// (collector/vllm/collect_mla.py, run_attention_torch, removed upstream in
// commit 3e63654dc; it wrote vLLM 0.14.0's context_mla_perf and
// generation_mla_perf, read here as BackendOnly rows) times six forward
// calls back to back between two CUDA events, with no CUDA graph. Its
// module collector (collect_mla_module_v2.py, run_mla_module) times with
// collector/helper.py's benchmark_with_power and allow_graph_fail, which
// runs eagerly when CUDA-graph capture fails; the context modules are
// timed so. Such a row measures the slower of the GPU and the
// host dispatching the next call: every small call takes about the same
// host time whatever its shape. The fit then describes the rows by
// max(GPU time, BenchHostUS) (hardware.OpEfficiency.BenchSeconds), a term
// of the benchmark that the step model never charges (a CUDA-graph decode
// step has no such floor), instead of bending its memory curve and
// per-request term into a constant that the step model would charge every
// call.

// mlaRowEager reports whether an MLA table row was timed eagerly: a
// kernel-level (BackendOnly) row, or a module row of the context phase.
func mlaRowEager(r MLAModuleRow) bool {
	return r.BackendOnly || r.Phase == "context"
}

// mixerHostFloor refits the eagerly timed family f with a host floor and
// keeps it when it describes every row at least as well as free, its fit
// without one (robustLoss, the objective of both), as hostFloorFit does
// for GEMM families. Under the floor the rows show neither the kernel's
// launch (the host's dispatch of the next call overlaps it) nor its memory
// side at small sizes, so, as hostFloorFit holds a reference family's,
// the fit holds the memory curve and launch of f.ref, the base profile's
// attention kernel of the same phase, fitted to tables timed in CUDA
// graphs on the same GPU (the KV cache streams through the same memory
// system). Fitted free, they take whatever constant the floor's scatter
// leaves (on H100's 0.14.0 decode rows a 46 us launch, or a memory curve
// worth 58 us at small sizes), which the step model would charge in every
// CUDA-graph step. The compute curve, per-pair and L2 terms and the floor
// are fitted. When f.ref's memory curve is read at another index than
// f's, there is nothing to hold and free is kept. It records the choice in out.HostFloor
// and returns the kept fit and the fit options the cross-validation
// refits with, so the held-out errors are those of the kept form.
// Deterministic.
func mixerHostFloor(f *mixerFamily, free FitResult, seed uint64, restarts int, out *MixerFit) (FitResult, fitOptions, error) {
	plain := fitOptions{restarts: restarts}
	if f.ref.MemoryIndex != f.init.MemoryIndex {
		return free, plain, nil
	}
	fo := fitOptions{restarts: restarts, hostFloor: true}
	init := f.init
	init.Memory, init.LaunchUS, init.BenchHostUS = f.ref.Memory, f.ref.LaunchUS, 0
	floor, err := fitOp(f.samples, init, seed, fo)
	if err != nil {
		return free, plain, fmt.Errorf("host floor: %w", err)
	}
	// The held terms come back through the fit's coordinates within a few
	// ulps; they are stored exactly.
	floor.Efficiency.Memory, floor.Efficiency.LaunchUS = init.Memory, init.LaunchUS
	ch := &HostFloorChoice{Family: string(f.kernel), FreeLoss: robustLoss(f.samples, free.Efficiency),
		FloorLoss: robustLoss(f.samples, floor.Efficiency), HostUS: floor.Efficiency.BenchHostUS}
	ch.Kept = ch.FloorLoss <= ch.FreeLoss
	out.HostFloor = ch
	if !ch.Kept {
		return free, plain, nil
	}
	return floor, fo, nil
}
