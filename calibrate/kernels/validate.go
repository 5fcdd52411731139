package kernels

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// FamilyReport is the prediction error of one family on every row.
type FamilyReport struct {
	Family string `json:"family"`
	calibrate.APEStats
}

// Report is the result of Validate.
type Report struct {
	GPU string `json:"gpu"`
	// Calibrated and ProfileSource describe the profile that was tested.
	Calibrated    bool           `json:"calibrated"`
	ProfileSource string         `json:"profile_source"`
	Dir           string         `json:"dir"`
	Families      []FamilyReport `json:"families"`
	// Vidur holds the cross-check against Vidur layer tables, when given
	// (package calibrate/vidur).
	Vidur    []FamilyReport `json:"vidur,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

// Validate predicts every row of every table of src with the GPU's current
// profile (calibrated or default) and reports, per family, the row count
// and the median and p90 absolute percentage error.
func Validate(gpu *hardware.GPU, src Source) (*Report, error) {
	if gpu == nil {
		return nil, fmt.Errorf("gpu: is required")
	}
	if src == nil {
		return nil, fmt.Errorf("source: is required")
	}
	k, err := src.Tables()
	if err != nil {
		return nil, err
	}
	p := gpu.EffectiveProfile()
	rep := &Report{GPU: gpu.Name, Calibrated: p.Calibrated, ProfileSource: p.Source, Dir: k.Dir}
	fams, warns := families(k, gpu)
	rep.Warnings = append(rep.Warnings, warns...)
	for _, f := range fams {
		rep.Families = append(rep.Families, FamilyReport{Family: f.name, APEStats: calibrate.SummarizeAPE(apes(f.samples, f.get(p)))})
	}
	ns, byN := allReduceByGPUs(k)
	for _, n := range ns {
		var e []float64
		for _, pt := range byN[n] {
			e = append(e, calibrate.APE(p.AllReduceSeconds(gpu, pt.Bytes, pt.NumGPUs), pt.Seconds))
		}
		rep.Families = append(rep.Families, FamilyReport{Family: fmt.Sprintf("%s%d", FamilyAllReducePrefix, n), APEStats: calibrate.SummarizeAPE(e)})
	}
	return rep, nil
}
