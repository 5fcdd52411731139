package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/roofsim/roofsim/hardware"
)

// ModelAccuracy is the prediction error of one (model, format) pair.
type ModelAccuracy struct {
	Model, Format string
	// N is the number of rows; NPrefill and NDecode split it.
	N, NPrefill, NDecode int
	// Absolute % errors |pred - meas| / meas x 100.
	PrefillMedian, PrefillWorst float64
	DecodeMedian, DecodeWorst   float64
}

// ThroughputReport compares predicted with measured tok/s per model.
type ThroughputReport struct {
	// Title says what was compared ("validate", "leave-one-model-out").
	Title  string
	Models []ModelAccuracy
	// PrefillMedian and DecodeMedian are over all rows of all models.
	PrefillMedian, DecodeMedian float64
	// Rows is the number of rows compared; Excluded those left out.
	Rows, Excluded int
}

func tpAPE(pred, meas float64) float64 { return math.Abs(pred-meas) / meas * 100 }

func tpMedian(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func tpMax(v []float64) float64 {
	m := math.NaN()
	for _, x := range v {
		if math.IsNaN(m) || x > m {
			m = x
		}
	}
	return m
}

// predictRows prices every row exactly (roofline.Phases) on g's profile.
func predictRows(g *hardware.GPU, used []UsedRow) (*ThroughputReport, error) {
	fs := newFitSet(g, used)
	ms, err := fs.models(g.EffectiveProfile())
	if err != nil {
		return nil, err
	}
	type acc struct{ p, d []float64 }
	per := map[string]*acc{}
	var allP, allD []float64
	for _, u := range used {
		pred, err := PredictTokensPerS(ms[u.Mapping.Key()], u.Row)
		if err != nil {
			return nil, err
		}
		e := tpAPE(pred, u.Row.Value)
		a := per[u.Mapping.Key()]
		if a == nil {
			a = &acc{}
			per[u.Mapping.Key()] = a
		}
		if u.Row.Kind == "prefill" {
			a.p, allP = append(a.p, e), append(allP, e)
		} else {
			a.d, allD = append(a.d, e), append(allD, e)
		}
	}
	rep := &ThroughputReport{Rows: len(used), PrefillMedian: tpMedian(allP), DecodeMedian: tpMedian(allD)}
	for _, k := range fs.keys {
		a, mp := per[k], fs.maps[k]
		rep.Models = append(rep.Models, ModelAccuracy{Model: mp.Model, Format: mp.Format, N: len(a.p) + len(a.d),
			NPrefill: len(a.p), NDecode: len(a.d), PrefillMedian: tpMedian(a.p), PrefillWorst: tpMax(a.p),
			DecodeMedian: tpMedian(a.d), DecodeWorst: tpMax(a.d)})
	}
	return rep, nil
}

// ValidateThroughput predicts every usable row of file (the llama.cpp rows
// CalibrateThroughput would fit) with gpu's current profile.
func ValidateThroughput(gpu *hardware.GPU, file string) (*ThroughputReport, error) {
	if gpu == nil {
		return nil, fmt.Errorf("validate throughput: gpu: must be set")
	}
	rows, err := ReadThroughputRows(file)
	if err != nil {
		return nil, err
	}
	o := ThroughputOptions{}
	lo, hi := o.builds()
	used, excl := SelectThroughputRows(rows, lo, hi)
	if len(used) == 0 {
		return nil, fmt.Errorf("validate throughput: %s: no usable rows", file)
	}
	rep, err := predictRows(gpu, used)
	if err != nil {
		return nil, fmt.Errorf("validate throughput: %w", err)
	}
	rep.Title = fmt.Sprintf("validate: %s profile (%s) vs %s", gpu.Name, gpu.EffectiveProfile().Engine, file)
	rep.Excluded = len(excl)
	return rep, nil
}

// RunThroughputCalibration reads file and fits gpu's profile to it (the
// `sim calibrate --throughput` entry point). seed is recorded; the fit is
// deterministic.
func RunThroughputCalibration(gpu *hardware.GPU, file string, seed uint64) (*ThroughputResult, error) {
	rows, err := ReadThroughputRows(file)
	if err != nil {
		return nil, err
	}
	return CalibrateThroughput(ThroughputOptions{GPU: gpu, Rows: rows, File: file, Seed: seed})
}

// LeaveOneModelOut fits on all models but one and predicts every row of
// the held-out model, for each model in turn; the report's per-model
// errors are all out-of-sample. Each fold starts from the kernel-row prior
// and never sees the held-out model's rows.
func LeaveOneModelOut(gpu *hardware.GPU, file string) (*ThroughputReport, error) {
	rows, err := ReadThroughputRows(file)
	if err != nil {
		return nil, err
	}
	return leaveOneModelOut(gpu, rows, file, 2500)
}

// leaveOneModelOut runs LOMO with foldEvals loss evaluations per fold.
func leaveOneModelOut(gpu *hardware.GPU, rows []ThroughputRow, file string, foldEvals int) (*ThroughputReport, error) {
	o := ThroughputOptions{}
	lo, hi := o.builds()
	used, excluded := SelectThroughputRows(rows, lo, hi)
	var models []string
	seen := map[string]bool{}
	for _, u := range used {
		if !seen[u.Mapping.Model] {
			seen[u.Mapping.Model] = true
			models = append(models, u.Mapping.Model)
		}
	}
	sort.Strings(models)
	rep := &ThroughputReport{Title: fmt.Sprintf("leave-one-model-out: %s, llama.cpp b%d-b%d (CUDA, flash attention)", gpu.Name, lo, hi), Excluded: len(excluded)}
	var allP, allD []float64
	for _, held := range models {
		fold, err := CalibrateThroughput(ThroughputOptions{GPU: gpu, Rows: rows, File: file, ExcludeModels: []string{held},
			MaxEvals: foldEvals})
		if err != nil {
			return nil, fmt.Errorf("fold %s: %w", held, err)
		}
		var test []UsedRow
		for _, u := range used {
			if u.Mapping.Model == held {
				test = append(test, u)
			}
		}
		g := gpu.Clone()
		g.Profile = fold.Profile
		r, err := predictRowsRaw(g, test)
		if err != nil {
			return nil, err
		}
		allP, allD = append(allP, r.p...), append(allD, r.d...)
		rep.Models = append(rep.Models, r.models...)
		rep.Rows += len(test)
	}
	rep.PrefillMedian, rep.DecodeMedian = tpMedian(allP), tpMedian(allD)
	return rep, nil
}

type rawPred struct {
	p, d   []float64
	models []ModelAccuracy
}

func predictRowsRaw(g *hardware.GPU, used []UsedRow) (*rawPred, error) {
	rep, err := predictRows(g, used)
	if err != nil {
		return nil, err
	}
	fs := newFitSet(g, used)
	ms, err := fs.models(g.EffectiveProfile())
	if err != nil {
		return nil, err
	}
	out := &rawPred{models: rep.Models}
	for _, u := range used {
		pred, err := PredictTokensPerS(ms[u.Mapping.Key()], u.Row)
		if err != nil {
			return nil, err
		}
		if u.Row.Kind == "prefill" {
			out.p = append(out.p, tpAPE(pred, u.Row.Value))
		} else {
			out.d = append(out.d, tpAPE(pred, u.Row.Value))
		}
	}
	return out, nil
}

// WriteText prints the report as an aligned table with percentages to one
// decimal.
func (r *ThroughputReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf("%.1f", v)
	}
	if r.Title != "" {
		if _, err := fmt.Fprintln(w, r.Title); err != nil {
			return err
		}
	}
	fmt.Fprintln(tw, "model\tformat\tn\tprefill med %\tprefill worst %\tdecode med %\tdecode worst %\t")
	for _, m := range r.Models {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", m.Model, m.Format, m.N, f(m.PrefillMedian), f(m.PrefillWorst), f(m.DecodeMedian), f(m.DecodeWorst))
	}
	fmt.Fprintf(tw, "all\t\t%d\t%s\t\t%s\t\t\n", r.Rows, f(r.PrefillMedian), f(r.DecodeMedian))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d rows excluded: other engines, builds, SECONDARY/DERIVED, unmapped models)\n", r.Excluded)
	return err
}
