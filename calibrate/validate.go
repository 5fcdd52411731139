package calibrate

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
)

// FamilyReport is the prediction error of one family on every row.
type FamilyReport struct {
	Family string `json:"family"`
	APEStats
}

// KernelReport is the result of ValidateKernels.
type KernelReport struct {
	GPU string `json:"gpu"`
	// Calibrated and ProfileSource describe the profile that was tested.
	Calibrated    bool           `json:"calibrated"`
	ProfileSource string         `json:"profile_source"`
	Dir           string         `json:"dir"`
	Families      []FamilyReport `json:"families"`
	// Vidur holds the cross-check against Vidur layer tables, when given.
	Vidur    []FamilyReport `json:"vidur,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

// ValidateKernels predicts every row of every kernel table in dir with the
// GPU's current profile (calibrated or default) and reports, per family,
// the row count and the median and p90 absolute percentage error. Each
// vidurFiles entry is a Vidur <model>.mlp.csv table whose GEMM operators
// are cross-checked too (see ValidateVidur).
func ValidateKernels(gpu *hardware.GPU, dir string, vidurFiles ...string) (*KernelReport, error) {
	if gpu == nil {
		return nil, fmt.Errorf("gpu: is required")
	}
	k, err := ReadKernels(dir)
	if err != nil {
		return nil, err
	}
	p := gpu.EffectiveProfile()
	rep := &KernelReport{GPU: gpu.Name, Calibrated: p.Calibrated, ProfileSource: p.Source, Dir: dir}
	fams, warns := families(k, gpu)
	rep.Warnings = append(rep.Warnings, warns...)
	for _, f := range fams {
		rep.Families = append(rep.Families, FamilyReport{Family: f.name, APEStats: summarizeAPE(apes(f.samples, f.get(p)))})
	}
	pts := BestAllReduce(k.CustomAllReduce, k.NCCL)
	byN := map[int][]float64{}
	var ns []int
	for _, pt := range pts {
		if _, ok := byN[pt.NumGPUs]; !ok {
			ns = append(ns, pt.NumGPUs)
		}
		byN[pt.NumGPUs] = append(byN[pt.NumGPUs], APE(p.AllReduceSeconds(gpu, pt.Bytes, pt.NumGPUs), pt.Seconds))
	}
	for _, n := range ns {
		rep.Families = append(rep.Families, FamilyReport{Family: fmt.Sprintf("%s%d", FamilyAllReducePrefix, n), APEStats: summarizeAPE(byN[n])})
	}
	for _, vf := range vidurFiles {
		fr, err := ValidateVidur(gpu, vf)
		if err != nil {
			return nil, err
		}
		rep.Vidur = append(rep.Vidur, fr...)
	}
	return rep, nil
}
