// Package arsync identifies the spread of the ranks' arrival at a
// tensor-parallel collective (hardware.Profile.AllReduceSyncUS) from
// closed-loop serving rows of one GPU measured at several TP degrees.
//
// The term is a wait per collective of AllReduceSyncUS x E[max of n
// standard normals] for n GPUs (roofline prices it), so it moves only rows
// with TP > 1, more at larger TP. Its value is fitted by simulating every
// row at a few values (Options.Grid) and interpolating each row's
// predicted TPOT linearly between them; the fit minimises the rows' summed
// squared log TPOT error. Whether the term exists is decided by leave one
// TP degree out: each degree's rows are predicted with the value fitted on
// the other degrees, and the term is kept only when the pooled median
// absolute TPOT error of those held-out predictions is below that of no
// term. Reading order: Fit, then Result.
package arsync

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
)

// DefaultGrid returns the spreads a fit simulates by default, µs.
func DefaultGrid() []float64 { return []float64{0, 1, 2, 4, 8, 16} }

// InputError is a fit's bad input: the option or data it concerns and why.
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// fineStep is the resolution of the fit's scan over the grid's range, µs.
const fineStep = 0.01

// Options tunes Fit.
type Options struct {
	// Serving are the options every row is simulated with (campaign,
	// engine settings, seed); its GPU resolver is wrapped to set the spread.
	Serving serving.Options
	// Grid are the spreads simulated, µs, at least two distinct values >= 0
	// including 0; nil means DefaultGrid.
	Grid []float64
}

// GroupErrors are the TPOT errors of one TP degree's rows.
type GroupErrors struct {
	TP   int `json:"tp"`
	Rows int `json:"rows"`
	// None, Fitted and HeldOut are the errors with no spread, with the
	// value fitted on every degree, and with the value fitted without this
	// degree (HeldOutSyncUS).
	None          serving.Errors `json:"none"`
	Fitted        serving.Errors `json:"fitted"`
	HeldOut       serving.Errors `json:"held_out"`
	HeldOutSyncUS float64        `json:"held_out_sync_us"`
}

// Result is an identification of the spread on one GPU's rows.
type Result struct {
	GPU  string `json:"gpu"`
	Rows int    `json:"rows"`
	// FittedSyncUS is the value fitted on every row, µs; SyncUS is the value
	// to ship: FittedSyncUS when Kept, else 0.
	FittedSyncUS float64 `json:"fitted_sync_us"`
	SyncUS       float64 `json:"sync_us"`
	Kept         bool    `json:"kept"`
	// CVMedianAPE and NoneMedianAPE are the pooled median absolute TPOT
	// errors, percent, of the held-out predictions and of no term.
	CVMedianAPE   float64       `json:"cv_median_ape_pct"`
	NoneMedianAPE float64       `json:"none_median_ape_pct"`
	Groups        []GroupErrors `json:"groups"`
	// Skipped counts rows that could not be simulated (left out).
	Skipped int `json:"skipped"`
}

// row is one usable row's measurement and its predicted TPOT at each grid
// value.
type row struct {
	tp       int
	measured float64
	pred     []float64
}

// Fit identifies the spread from the rows of gpu (the table's system name,
// e.g. "h100_sxm") with TP > 1 among rows. It needs rows at two or more TP
// degrees. Deterministic.
func Fit(ctx context.Context, rows []serving.Row, gpu string, opts Options) (*Result, error) {
	grid := opts.Grid
	if grid == nil {
		grid = DefaultGrid()
	}
	grid = slices.Clone(grid)
	sort.Float64s(grid)
	grid = slices.Compact(grid)
	if len(grid) < 2 || grid[0] != 0 {
		return nil, &InputError{Field: "grid", Reason: "needs two or more distinct values, the smallest 0"}
	}
	var sel []serving.Row
	for _, r := range rows {
		if r.GPU == gpu && r.TP > 1 {
			sel = append(sel, r)
		}
	}
	tps := distinct(sel, func(r serving.Row) int { return r.TP })
	if len(tps) < 2 {
		return nil, &InputError{Field: "rows", Reason: fmt.Sprintf("gpu %q: need rows at two or more TP degrees > 1, got %v", gpu, tps)}
	}
	preds := make([][]float64, len(sel))
	skipped := make([]bool, len(sel))
	for j, v := range grid {
		rep, err := serving.ValidateContext(ctx, sel, withSync(opts.Serving, v))
		if err != nil {
			return nil, err
		}
		for i, r := range rep.Rows {
			if r.Skipped != "" {
				skipped[i] = true
				continue
			}
			if j == 0 {
				preds[i] = make([]float64, len(grid))
			}
			preds[i][j] = r.PredTPOTms
		}
	}
	var use []row
	res := &Result{GPU: gpu}
	for i, r := range sel {
		if skipped[i] || !(r.TPOTms > 0) {
			res.Skipped++
			continue
		}
		use = append(use, row{tp: r.TP, measured: r.TPOTms, pred: preds[i]})
	}
	res.Rows = len(use)
	if len(distinct(use, func(r row) int { return r.tp })) < 2 {
		return nil, &InputError{Field: "rows", Reason: fmt.Sprintf("gpu %q: fewer than two TP degrees left after %d rows could not be simulated", gpu, res.Skipped)}
	}
	res.FittedSyncUS = fitSync(use, grid, func(int) bool { return true })
	var cvAbs, noneAbs []float64
	for _, tp := range distinct(use, func(r row) int { return r.tp }) {
		held := fitSync(use, grid, func(t int) bool { return t != tp })
		g := GroupErrors{TP: tp, HeldOutSyncUS: held}
		var none, fitted, out errAcc
		for _, r := range use {
			if r.tp != tp {
				continue
			}
			g.Rows++
			none.add(r, interp(grid, r.pred, 0))
			fitted.add(r, interp(grid, r.pred, res.FittedSyncUS))
			out.add(r, interp(grid, r.pred, held))
		}
		g.None, g.Fitted, g.HeldOut = none.errors(), fitted.errors(), out.errors()
		cvAbs = append(cvAbs, out.abs...)
		noneAbs = append(noneAbs, none.abs...)
		res.Groups = append(res.Groups, g)
	}
	res.CVMedianAPE = calibrate.SummarizeAPE(cvAbs).MedianAPE
	res.NoneMedianAPE = calibrate.SummarizeAPE(noneAbs).MedianAPE
	if res.CVMedianAPE < res.NoneMedianAPE {
		res.Kept, res.SyncUS = true, res.FittedSyncUS
	}
	return res, nil
}

// withSync returns opts whose GPUs carry a spread of v µs.
func withSync(opts serving.Options, v float64) serving.Options {
	base := opts.GPU
	if base == nil {
		base = hardware.Lookup
	}
	opts.GPU = func(name string) (*hardware.GPU, error) {
		g, err := base(name)
		if err != nil {
			return nil, err
		}
		p := g.EffectiveProfile().Clone()
		p.AllReduceSyncUS = v
		g.Profile = p
		return g, nil
	}
	return opts
}

// fitSync returns the spread in [0, max grid] minimising the summed squared
// log TPOT error of the rows whose TP keep accepts, scanning in steps of
// fineStep (the first minimum wins).
func fitSync(rows []row, grid []float64, keep func(tp int) bool) float64 {
	best, bestV := math.Inf(1), 0.0
	hi := grid[len(grid)-1]
	for k := 0; float64(k)*fineStep <= hi+1e-9; k++ {
		v := float64(k) * fineStep
		var s float64
		for _, r := range rows {
			if keep(r.tp) {
				d := math.Log(interp(grid, r.pred, v) / r.measured)
				s += d * d
			}
		}
		if s < best {
			best, bestV = s, v
		}
	}
	return bestV
}

// interp is ys (values at grid) linearly interpolated at v in the grid's
// range.
func interp(grid, ys []float64, v float64) float64 {
	j := sort.SearchFloat64s(grid, v)
	switch {
	case j == 0:
		return ys[0]
	case j >= len(grid):
		return ys[len(ys)-1]
	}
	f := (v - grid[j-1]) / (grid[j] - grid[j-1])
	return ys[j-1] + f*(ys[j]-ys[j-1])
}

// errAcc accumulates signed and absolute percentage errors.
type errAcc struct {
	abs    []float64
	signed float64
}

func (a *errAcc) add(r row, pred float64) {
	e := (pred - r.measured) / r.measured * 100
	a.abs = append(a.abs, math.Abs(e))
	a.signed += e
}

func (a *errAcc) errors() serving.Errors {
	if len(a.abs) == 0 {
		return serving.Errors{}
	}
	return serving.Errors{APEStats: calibrate.SummarizeAPE(a.abs), MeanSignedPct: a.signed / float64(len(a.abs))}
}

// distinct returns the distinct TP degrees of rows, in increasing order.
func distinct[R any](rows []R, tp func(R) int) []int {
	var out []int
	for _, r := range rows {
		if t := tp(r); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
