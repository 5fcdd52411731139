package throughput

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
	"text/tabwriter"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// ModelAccuracy is the prediction error of one (model, format) pair.
type ModelAccuracy struct {
	Model, Format string
	// N is the number of rows; NPrefill and NDecode split it.
	N, NPrefill, NDecode int
	// Absolute % errors |pred - meas| / meas x 100 (calibrate.APE): the
	// median (calibrate.Median) and the largest.
	PrefillMedian, PrefillWorst float64
	DecodeMedian, DecodeWorst   float64
}

// Report compares predicted with measured tok/s per model.
type Report struct {
	// Title says what was compared ("validate", "leave-one-model-out").
	Title  string
	Models []ModelAccuracy
	// PrefillMedian and DecodeMedian are over all rows of all models.
	PrefillMedian, DecodeMedian float64
	// Rows is the number of rows compared; Excluded those left out.
	Rows, Excluded int
}

// apes holds the absolute % errors of prefill and decode points.
type apes struct{ p, d []float64 }

func (e *apes) add(pt Point, pred float64) {
	a := calibrate.APE(pred, pt.TokensPerS)
	if pt.Decode {
		e.d = append(e.d, a)
	} else {
		e.p = append(e.p, a)
	}
}

// predict prices every point exactly (roofline.Phases) on g's profile and
// returns the per-model report with the errors of every point.
func predict(g *hardware.GPU, points []Point) (*Report, error) {
	rep, _, err := predictErrors(g, points)
	return rep, err
}

func predictErrors(g *hardware.GPU, points []Point) (*Report, *apes, error) {
	fs := newFitSet(g, points)
	ms, err := fs.models(g.EffectiveProfile())
	if err != nil {
		return nil, nil, err
	}
	per := map[string]*apes{}
	all := &apes{}
	for _, pt := range points {
		pred, err := PredictTokensPerS(ms[pt.Mapping.Key()], pt.Phase)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", pt.Line, err)
		}
		e := per[pt.Mapping.Key()]
		if e == nil {
			e = &apes{}
			per[pt.Mapping.Key()] = e
		}
		e.add(pt, pred)
		all.add(pt, pred)
	}
	rep := &Report{Rows: len(points), PrefillMedian: calibrate.Median(all.p), DecodeMedian: calibrate.Median(all.d)}
	for _, k := range fs.keys {
		e, mp := per[k], fs.maps[k]
		rep.Models = append(rep.Models, ModelAccuracy{Model: mp.Model, Format: mp.Format, N: len(e.p) + len(e.d),
			NPrefill: len(e.p), NDecode: len(e.d), PrefillMedian: calibrate.Median(e.p), PrefillWorst: calibrate.Max(e.p),
			DecodeMedian: calibrate.Median(e.d), DecodeWorst: calibrate.Max(e.d)})
	}
	return rep, all, nil
}

// Validate predicts every point of src (the rows Calibrate would fit) with
// gpu's current profile.
func Validate(gpu *hardware.GPU, src Source) (*Report, error) {
	if gpu == nil {
		return nil, fmt.Errorf("validate throughput: gpu: must be set")
	}
	if src == nil {
		return nil, fmt.Errorf("validate throughput: source: must be set")
	}
	used, excl := src.Points()
	pv := src.Provenance()
	if len(used) == 0 {
		return nil, fmt.Errorf("validate throughput: %s: no usable rows", pv.File)
	}
	rep, err := predict(gpu, used)
	if err != nil {
		return nil, fmt.Errorf("validate throughput: %w", err)
	}
	rep.Title = fmt.Sprintf("validate: %s profile (%s) vs %s", gpu.Name, gpu.EffectiveProfile().Engine, pv.File)
	rep.Excluded = len(excl)
	return rep, nil
}

// LeaveOneModelOutProgress fits on all models but one and predicts every
// point of the held-out model, for each model in turn; the report's per-model errors
// are all out-of-sample. Each fold starts from the source's prior, never
// sees the held-out model's points, and runs at most foldEvals loss
// evaluations (0: 2500). Folds are independent and run GOMAXPROCS at a
// time; their results are collected in model order, so the report does not
// depend on scheduling. It calls progress (when not nil, serially) after
// each fold with the folds done, their total and the held-out model.
func LeaveOneModelOutProgress(gpu *hardware.GPU, src Source, foldEvals int, progress func(done, total int, model string)) (*Report, error) {
	if gpu == nil || src == nil {
		return nil, fmt.Errorf("leave-one-model-out: gpu and source must be set")
	}
	if foldEvals == 0 {
		foldEvals = 2500
	}
	used, excluded := src.Points()
	models := modelsOf(used)
	rep := &Report{Title: fmt.Sprintf("leave-one-model-out: %s, %s", gpu.Name, src.Provenance().Engine), Excluded: len(excluded)}
	folds := make([]foldResult, len(models))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(models)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				folds[i] = lomoFold(gpu, src, used, models[i], foldEvals)
				if progress != nil {
					mu.Lock()
					done++
					progress(done, len(models), models[i])
					mu.Unlock()
				}
			}
		}()
	}
	for _, i := range foldOrder(models, used) {
		next <- i
	}
	close(next)
	wg.Wait()
	all := &apes{}
	for i, f := range folds {
		if f.err != nil {
			return nil, fmt.Errorf("fold %s: %w", models[i], f.err)
		}
		all.p, all.d = append(all.p, f.e.p...), append(all.d, f.e.d...)
		rep.Models = append(rep.Models, f.rep.Models...)
		rep.Rows += f.rows
	}
	rep.PrefillMedian, rep.DecodeMedian = calibrate.Median(all.p), calibrate.Median(all.d)
	return rep, nil
}

// foldOrder is the order the folds start in: most training points first
// (the longest fits, so that no long one starts last and runs alone), ties
// in model order. Results are collected by model, so the order only
// changes the wall time.
func foldOrder(models []string, used []Point) []int {
	held := map[string]int{}
	for _, u := range used {
		held[u.Mapping.Model]++
	}
	order := make([]int, len(models))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return held[models[order[a]]] < held[models[order[b]]] })
	return order
}

// foldResult is one leave-one-model-out fold: the held-out model's report,
// its errors and row count.
type foldResult struct {
	rep  *Report
	e    *apes
	rows int
	err  error
}

// lomoFold fits without model held and predicts held's points.
func lomoFold(gpu *hardware.GPU, src Source, used []Point, held string, foldEvals int) (out foldResult) {
	fold, err := Calibrate(Options{GPU: gpu, Source: src, ExcludeModels: []string{held}, MaxEvals: foldEvals})
	if err != nil {
		out.err = err
		return out
	}
	test := pointsOf(used, held)
	g := gpu.Clone()
	g.Profile = fold.Profile
	out.rep, out.e, out.err = predictErrors(g, test)
	out.rows = len(test)
	return out
}

// WriteText prints the report as an aligned table with percentages to one
// decimal.
func (r *Report) WriteText(w io.Writer) error {
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

// ProfileYAML renders the fitted profile in the hardware/profiles/<gpu>.yaml
// schema, preceded by a comment with the profile's source and training
// error. hardware.ParseProfile reads it back.
func (r *Result) ProfileYAML() ([]byte, error) {
	header := fmt.Sprintf("# %s efficiency profile fitted to model-level llama.cpp throughput.\n", r.GPU) +
		fmt.Sprintf("# Training median abs error: prefill %.1f%%, decode %.1f%% over %d rows.\n",
			r.TrainPrefillMedianAPE, r.TrainDecodeMedianAPE, len(r.Used)) +
		regenerate(r)
	return calibrate.MarshalProfileWithHeader(r.Profile, header)
}

// regenerate is the header line naming the command that made r: its
// throughput stage's, else the documented form.
func regenerate(r *Result) string {
	if st, ok := r.Profile.Provenance.Stage(hardware.StageThroughput); ok && st.Command != "" {
		return "# Regenerate: " + st.Command + "\n"
	}
	return fmt.Sprintf("# Regenerate: sim calibrate --gpu %s --throughput ../shared/data/%s/measurements.csv --out hardware/profiles/%s.yaml --profile-only --engine-profile engine/profiles/<engine>-<release>.yaml\n", r.GPU, r.GPU, r.GPU)
}
