package kernels

import (
	"context"
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
	return ValidateContext(context.Background(), gpu, src)
}

// ValidateContext is Validate stopped by ctx: once ctx is done it returns
// ctx's cause and no report, at the latest when the family being priced
// (or the reading of the tables) is done.
func ValidateContext(ctx context.Context, gpu *hardware.GPU, src Source) (*Report, error) {
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
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	p := gpu.EffectiveProfile()
	rep := &Report{GPU: gpu.Name, Calibrated: p.Calibrated, ProfileSource: p.Summary(), Dir: k.Dir}
	fams, warns := families(k, gpu)
	rep.Warnings = append(rep.Warnings, warns...)
	for _, f := range fams {
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		rep.Families = append(rep.Families, FamilyReport{Family: f.name, APEStats: calibrate.SummarizeAPE(apes(f.samples, f.get(p)))})
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
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

// Point is one table row predicted by the profile: the pair the web view's
// validation page draws in its predicted-vs-measured scatter. Kind is the
// family (gemm_bf16, attention_decode, allreduce_tp4, ...).
type Point struct {
	Kind        string  `json:"kind"`
	MeasuredUS  float64 `json:"measured_us"`
	PredictedUS float64 `json:"predicted_us"`
	APEPct      float64 `json:"ape_pct"`
}

// Points predicts the rows of src as Validate does and returns at most
// perFamily of them per family, every n-th row in table order (so the
// sample is deterministic and spans each table). perFamily must be >= 1.
func Points(gpu *hardware.GPU, src Source, perFamily int) ([]Point, error) {
	return PointsContext(context.Background(), gpu, src, perFamily)
}

// PointsContext is Points stopped by ctx, as ValidateContext is.
func PointsContext(ctx context.Context, gpu *hardware.GPU, src Source, perFamily int) ([]Point, error) {
	if gpu == nil {
		return nil, fmt.Errorf("gpu: is required")
	}
	if src == nil {
		return nil, fmt.Errorf("source: is required")
	}
	if perFamily < 1 {
		return nil, fmt.Errorf("perFamily: must be >= 1, got %d", perFamily)
	}
	k, err := src.Tables()
	if err != nil {
		return nil, err
	}
	p := gpu.EffectiveProfile()
	var out []Point
	add := func(kind string, n int, pair func(i int) (pred, meas float64)) {
		step := max(1, (n+perFamily-1)/perFamily)
		for i := 0; i < n; i += step {
			pred, meas := pair(i)
			out = append(out, Point{Kind: kind, MeasuredUS: meas * 1e6, PredictedUS: pred * 1e6, APEPct: calibrate.APE(pred, meas)})
		}
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	fams, _ := families(k, gpu)
	for _, f := range fams {
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		e := f.get(p)
		add(f.name, len(f.samples), func(i int) (float64, float64) { return f.samples[i].Predict(e), f.samples[i].Seconds })
	}
	ns, byN := allReduceByGPUs(k)
	for _, n := range ns {
		pts := byN[n]
		add(fmt.Sprintf("%s%d", FamilyAllReducePrefix, n), len(pts), func(i int) (float64, float64) {
			return p.AllReduceSeconds(gpu, pts[i].Bytes, pts[i].NumGPUs), pts[i].Seconds
		})
	}
	return out, nil
}

// Prepared is a GPU's tables as validation prices them (the operator
// families and the all-reduce points), built once so that several profiles
// can predict them: building the families (the MoE rows' routing most of
// all) costs seconds per table set, predicting with a profile a fraction
// of that.
type Prepared struct {
	gpu  *hardware.GPU
	fams []opFamily
	// arNs are the all-reduce GPU counts, ascending; arByN their points.
	arNs  []int
	arByN map[int][]ARPoint
	// Tables are the tables prepared.
	Tables *Tables
}

// Prepare builds k's families for GPU g (its peaks, bandwidth and L2; the
// profile is not read).
func Prepare(g *hardware.GPU, k *Tables) *Prepared {
	fams, _ := families(k, g)
	ns, byN := allReduceByGPUs(k)
	return &Prepared{gpu: g, fams: fams, arNs: ns, arByN: byN, Tables: k}
}

// Predict predicts every row with profile p on the prepared GPU's peaks
// and bandwidth: per family in Validate's order (all-reduce per GPU count
// last), each row's prediction and measurement. O(rows).
func (pr *Prepared) Predict(p *hardware.Profile) []FamilyPredictions {
	var out []FamilyPredictions
	for _, f := range pr.fams {
		e := f.get(p)
		fp := FamilyPredictions{Family: f.name}
		for _, s := range f.samples {
			fp.Pred, fp.Meas = append(fp.Pred, s.Predict(e)), append(fp.Meas, s.Seconds)
		}
		out = append(out, fp)
	}
	for _, n := range pr.arNs {
		fp := FamilyPredictions{Family: fmt.Sprintf("%s%d", FamilyAllReducePrefix, n)}
		for _, pt := range pr.arByN[n] {
			fp.Pred, fp.Meas = append(fp.Pred, p.AllReduceSeconds(pr.gpu, pt.Bytes, pt.NumGPUs)), append(fp.Meas, pt.Seconds)
		}
		out = append(out, fp)
	}
	return out
}
