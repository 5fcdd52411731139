package main

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
)

// kernelInput is where a kernel calibration reads its tables: a directory
// of CSV conversions (--kernels) or AIConfigurator's database at one
// engine release (--aic with --engine vllm@X). Notes say how the release's
// tables were resolved (reuse, an earlier release, kernel sources kept),
// one line each.
type kernelInput struct {
	Source kernels.Source
	// Where names the tables in messages.
	Where string
	Notes []string
	// Start is the profile an --aic fit starts from
	// (engine.Engine.KernelFitStart); nil for --kernels. StartNote names
	// the GPU-system terms carried into it ("" when none).
	Start     *hardware.Profile
	StartNote string
}

// kernelSource resolves the kernel tables of g from exactly one of
// kernelsDir and aicDir; eng (engine.Parse syntax) is required with aicDir
// and must be a vLLM release.
func kernelSource(cmd, kernelsDir, aicDir, eng string, g *hardware.GPU) (*kernelInput, error) {
	if (kernelsDir == "") == (aicDir == "") {
		return nil, usageError{fmt.Errorf("%s: give exactly one of --kernels and --aic", cmd)}
	}
	if kernelsDir != "" {
		if eng != "" {
			return nil, usageError{fmt.Errorf("%s: --engine goes with --aic (a --kernels directory's release is in its meta/ files)", cmd)}
		}
		return &kernelInput{Source: aiconfigurator.Dir(kernelsDir), Where: kernelsDir}, nil
	}
	e, db, system, rel, err := aicRelease(cmd, aicDir, eng, g)
	if err != nil {
		return nil, err
	}
	tables, rep, err := aiconfigurator.ReadAIC(db, system, rel, sourcePolicy(e, g))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	in := &kernelInput{Source: kernels.TablesSource{T: tables}, Where: fmt.Sprintf("%s (%s, vllm %s)", aicDir, system, rel), Notes: rep.Notes}
	in.Start, in.StartNote = e.KernelFitStart(g)
	return in, nil
}

// aicRelease opens the AIConfigurator database at aicDir and resolves
// g's system in it and the vLLM release eng names (engine.Parse syntax).
func aicRelease(cmd, aicDir, eng string, g *hardware.GPU) (engine.Engine, *aic.DB, string, aic.Release, error) {
	e, err := engine.Parse(eng)
	if err != nil {
		return e, nil, "", aic.Release{}, usageError{fmt.Errorf("%s: --engine: %w", cmd, err)}
	}
	if e.Name != engine.VLLM {
		return e, nil, "", aic.Release{}, usageError{fmt.Errorf("%s: --engine: --aic holds vLLM kernel tables; want vllm@<release>, as in vllm@0.19.0", cmd)}
	}
	db, err := aic.Open(aicDir)
	if err != nil {
		return e, nil, "", aic.Release{}, fmt.Errorf("%s: --aic: %w", cmd, err)
	}
	system, err := aiconfigurator.SystemOf(db, g)
	if err != nil {
		return e, nil, "", aic.Release{}, fmt.Errorf("%s: --gpu: %w", cmd, err)
	}
	return e, db, system, aic.Release(e.Version), nil
}

// btoi is 1 for true, 0 for false (counting the flags given).
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sourcePolicy is the kernel choice of engine release e on g's architecture
// (aiconfigurator.EnginePolicy).
func sourcePolicy(e engine.Engine, g *hardware.GPU) aiconfigurator.SourcePolicy {
	return aiconfigurator.EnginePolicy(e, g)
}
