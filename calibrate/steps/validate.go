package steps

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/roofline"
)

// Prediction is one row's predicted step time.
type Prediction struct {
	Row Row `json:"-"`
	// PredMS is the step model's time (ms) for the row's batch.
	PredMS float64 `json:"predicted_ms"`
	// Cost is the step model's split of PredMS.
	Cost roofline.StepCost `json:"cost"`
}

// APE is the absolute percentage error of the prediction (calibrate.APE).
func (p Prediction) APE() float64 { return calibrate.APE(p.PredMS, p.Row.LatencyMS) }

// Signed is the signed percentage error (positive: predicted too slow).
func (p Prediction) Signed() float64 { return (p.PredMS - p.Row.LatencyMS) / p.Row.LatencyMS * 100 }

// Stats are the errors of a group of rows: the median and p90 absolute
// percentage error (nearest rank, calibrate.Quantile) and the mean signed
// error (bias).
type Stats struct {
	N         int     `json:"n"`
	MedianAPE float64 `json:"median_ape_pct"`
	P90APE    float64 `json:"p90_ape_pct"`
	BiasPct   float64 `json:"bias_pct"`
	// MedianMS is the measured median step time of the group (ms).
	MedianMS float64 `json:"median_measured_ms"`
}

// Group is the errors of the rows of one step kind and segment ("" = all).
type Group struct {
	Kind    Kind   `json:"kind,omitempty"`
	Segment string `json:"segment,omitempty"`
	Stats
}

// Report is the result of Predict: every row's prediction and the errors
// by step kind, by workload segment and by both.
type Report struct {
	File        string       `json:"file"`
	Model       string       `json:"model"`
	GPU         string       `json:"gpu"`
	TP          int          `json:"tp"`
	Profile     string       `json:"profile"`
	Predictions []Prediction `json:"-"`
	All         Stats        `json:"all"`
	ByKind      []Group      `json:"by_kind"`
	BySegment   []Group      `json:"by_segment"`
	ByBoth      []Group      `json:"by_kind_and_segment"`
}

// Pricer prices one batch: *roofline.StepModel and *roofline.CachedStep
// are Pricers, the same step model `sim run` uses.
type Pricer interface {
	Cost(in *roofline.StepInput) roofline.StepCost
}

var (
	_ Pricer = (*roofline.StepModel)(nil)
	_ Pricer = (*roofline.CachedStep)(nil)
)

// Predict prices every row of t with m and summarises the errors. A row
// the model cannot price (a request's context beyond the model's maximum,
// or a non-finite or non-positive time) is an error naming the row.
func Predict(t *Table, m *roofline.StepModel) (*Report, error) {
	p := roofline.NewCachedStep(m)
	preds := make([]Prediction, len(t.Rows))
	maxCtx := m.Model().MaxPositionEmbeddings
	for i, r := range t.Rows {
		in := Batch(r)
		if l := longest(&in); maxCtx > 0 && l > maxCtx {
			return nil, fmt.Errorf("%s:%d: cannot price the step: a request's context of about %d tokens exceeds the model's %d (model %s)",
				t.Name, r.Line, l, maxCtx, m.Model().Name)
		}
		c := p.Cost(&in)
		ms := c.Seconds * 1e3
		if !(ms > 0) || math.IsInf(ms, 0) {
			return nil, fmt.Errorf("%s:%d: cannot price the step (%d prefill tokens in %d requests, %d decodes): predicted %g ms",
				t.Name, r.Line, r.PrefillTokens, r.PrefillRequests, r.DecodeRequests, ms)
		}
		preds[i] = Prediction{Row: r, PredMS: ms, Cost: c}
	}
	rep := Summarize(preds)
	rep.File = t.Name
	cfg, o := m.Model(), m.Options()
	rep.Model, rep.GPU, rep.TP = cfg.Name, m.GPU().Name, o.TP
	rep.Profile = m.GPU().EffectiveProfile().Summary()
	return rep, nil
}

// longest is the largest context a request of in attends to.
func longest(in *roofline.StepInput) int {
	l := 0
	for _, c := range in.Prefills {
		l = max(l, c.Tokens+c.Cached)
	}
	for _, d := range in.Decodes {
		l = max(l, d)
	}
	return l
}

// Summarize groups predictions by kind, segment and both (segments in
// order of first appearance; groups without rows are left out).
func Summarize(preds []Prediction) *Report {
	rep := &Report{Predictions: preds, All: stats(preds)}
	var segs []string
	for _, p := range preds {
		if !slices.Contains(segs, p.Row.Segment) {
			segs = append(segs, p.Row.Segment)
		}
	}
	pick := func(keep func(Row) bool) []Prediction {
		var out []Prediction
		for _, p := range preds {
			if keep(p.Row) {
				out = append(out, p)
			}
		}
		return out
	}
	for _, k := range Kinds() {
		if g := pick(func(r Row) bool { return r.Kind() == k }); len(g) > 0 {
			rep.ByKind = append(rep.ByKind, Group{Kind: k, Stats: stats(g)})
		}
	}
	for _, s := range segs {
		rep.BySegment = append(rep.BySegment, Group{Segment: s, Stats: stats(pick(func(r Row) bool { return r.Segment == s }))})
		for _, k := range Kinds() {
			if g := pick(func(r Row) bool { return r.Segment == s && r.Kind() == k }); len(g) > 0 {
				rep.ByBoth = append(rep.ByBoth, Group{Kind: k, Segment: s, Stats: stats(g)})
			}
		}
	}
	return rep
}

// stats summarises preds (NaNs when empty).
func stats(preds []Prediction) Stats {
	s := Stats{N: len(preds), MedianAPE: math.NaN(), P90APE: math.NaN(), BiasPct: math.NaN(), MedianMS: math.NaN()}
	if len(preds) == 0 {
		return s
	}
	apes := make([]float64, len(preds))
	meas := make([]float64, len(preds))
	var signed float64
	for i, p := range preds {
		apes[i], meas[i] = p.APE(), p.Row.LatencyMS
		signed += p.Signed()
	}
	s.MedianAPE = calibrate.Quantile(0.5, apes)
	s.P90APE = calibrate.Quantile(0.9, apes)
	s.MedianMS = calibrate.Median(meas)
	s.BiasPct = signed / float64(len(preds))
	return s
}

// WriteText writes the report as aligned tables.
func (rep *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "validate steps: %s tp%d on %s vs %s\nprofile: %s\n", rep.Model, rep.TP, rep.GPU, rep.File, rep.Profile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tsegment\tn\tmeasured median ms\tmedian APE %\tp90 APE %\tbias %\t")
	row := func(kind, seg string, s Stats) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.1f\t%.1f\t%+.1f\t\n", kind, seg, s.N, s.MedianMS, s.MedianAPE, s.P90APE, s.BiasPct)
	}
	for _, g := range rep.ByKind {
		row(string(g.Kind), "all", g.Stats)
	}
	for _, g := range rep.ByBoth {
		row(string(g.Kind), g.Segment, g.Stats)
	}
	for _, g := range rep.BySegment {
		row("all", g.Segment, g.Stats)
	}
	row("all", "all", rep.All)
	return tw.Flush()
}

// WritePredictions writes every input row, in input order, with its cells
// as read and a predicted_ms column added (3 decimals, as the table's
// latency_ms).
func WritePredictions(w io.Writer, header []string, preds []Prediction) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(slices.Clone(header), "predicted_ms")); err != nil {
		return err
	}
	for _, p := range preds {
		if err := cw.Write(append(slices.Clone(p.Row.Record), strconv.FormatFloat(p.PredMS, 'f', 3, 64))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
