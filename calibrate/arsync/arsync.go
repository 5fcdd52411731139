// Package arsync identifies the spread of the ranks' arrival at a
// tensor-parallel collective (hardware.Profile.AllReduceSyncUS) from
// closed-loop serving rows of one GPU measured at several TP degrees.
//
// The term is a wait per collective of AllReduceSyncUS x E[max of n
// standard normals] for n GPUs (roofline prices it), so it moves only rows
// with TP > 1, more at larger TP. Every row is simulated at a few values
// (Options.Grid) and its predicted TPOT interpolated linearly between them.
//
// The fit uses only what varies with TP: rows of one configuration (model,
// ISL, OSL, concurrency) measured at several TP degrees form a cell, and a
// cell's own factor (its mean log error) absorbs whatever the model misses
// for that configuration at every TP (the prefill interference of a high
// concurrency, a front end). The spread minimises the summed squared log
// error left within the cells. TP 1 rows anchor their cells without moving.
// Whether the term exists is decided by leave one TP degree out: each
// degree's rows are predicted with the spread fitted on the others and
// their cells' factors from the other degrees' rows, and the term is kept
// only when the pooled median absolute TPOT error of those predictions is
// below that of the same prediction with no spread. Reading order: Fit,
// then Result.
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
	// Progress, when set, is called after each spread of the grid has been
	// simulated on every row: done of total spreads.
	Progress func(done, total int)
}

// GroupErrors are the TPOT errors of one TP degree's rows.
type GroupErrors struct {
	TP   int `json:"tp"`
	Rows int `json:"rows"`
	// None and Fitted are the plain errors with no spread and with the
	// value fitted on every degree.
	None   serving.Errors `json:"none"`
	Fitted serving.Errors `json:"fitted"`
	// HeldOut are the errors of this degree's rows predicted with the
	// spread fitted without it (HeldOutSyncUS) times their cells' factors
	// from the other degrees; HeldOutNone the same with no spread. Rows
	// whose cell has no other degree are left out of both.
	HeldOut       serving.Errors `json:"held_out"`
	HeldOutNone   serving.Errors `json:"held_out_none"`
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
	// errors, percent, of the held-out predictions (GroupErrors.HeldOut)
	// and of the same predictions with no spread (HeldOutNone).
	CVMedianAPE   float64 `json:"cv_median_ape_pct"`
	NoneMedianAPE float64 `json:"none_median_ape_pct"`
	// BeatShare is the share of paired bootstrap resamples of the held-out
	// rows in which the held-out predictions' median absolute error is
	// below that of the same predictions with no spread; the spread is kept
	// only when it reaches calibrate.SelectionLevel, as every other term
	// selection requires (calibrate.PairedBootstrapShare).
	BeatShare float64       `json:"beat_share"`
	Groups    []GroupErrors `json:"groups"`
	// Skipped counts rows that could not be simulated (left out).
	Skipped int `json:"skipped"`
}

// row is one usable row's measurement and its predicted TPOT at each grid
// value.
type row struct {
	tp       int
	cell     string
	measured float64
	pred     []float64
}

// Fit identifies the spread from the rows of gpu (the table's system name,
// e.g. "h100_sxm") among rows. It needs rows at two or more TP degrees
// above 1. Deterministic.
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
		if r.GPU == gpu && r.TP >= 1 {
			sel = append(sel, r)
		}
	}
	tps := distinct(sel, func(r serving.Row) int { return r.TP })
	if len(tps) < 2 || tps[len(tps)-2] < 2 {
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
		if opts.Progress != nil {
			opts.Progress(j+1, len(grid))
		}
	}
	var use []row
	res := &Result{GPU: gpu}
	for i, r := range sel {
		if skipped[i] || !(r.TPOTms > 0) {
			res.Skipped++
			continue
		}
		cell := fmt.Sprintf("%s|%d|%d|%d", r.Model, r.ISL, r.OSL, r.Concurrency)
		use = append(use, row{tp: r.TP, cell: cell, measured: r.TPOTms, pred: preds[i]})
	}
	res.Rows = len(use)
	tps = distinct(use, func(r row) int { return r.tp })
	if len(tps) < 2 || tps[len(tps)-2] < 2 {
		return nil, &InputError{Field: "rows", Reason: fmt.Sprintf("gpu %q: fewer than two TP degrees > 1 left after %d rows could not be simulated", gpu, res.Skipped)}
	}
	all := func(int) bool { return true }
	res.FittedSyncUS = fitSync(use, grid, all)
	var cvAbs, noneAbs []float64
	for _, tp := range tps {
		if tp < 2 {
			continue
		}
		train := func(t int) bool { return t != tp }
		held := fitSync(use, grid, train)
		fHeld, fNone := cellFactors(use, grid, held, train), cellFactors(use, grid, 0, train)
		g := GroupErrors{TP: tp, HeldOutSyncUS: held}
		var none, fitted, out, outNone errAcc
		for _, r := range use {
			if r.tp != tp {
				continue
			}
			g.Rows++
			none.add(r, interp(grid, r.pred, 0))
			fitted.add(r, interp(grid, r.pred, res.FittedSyncUS))
			if a, ok := fHeld[r.cell]; ok {
				out.add(r, interp(grid, r.pred, held)*math.Exp(a))
				outNone.add(r, interp(grid, r.pred, 0)*math.Exp(fNone[r.cell]))
			}
		}
		g.None, g.Fitted, g.HeldOut, g.HeldOutNone = none.errors(), fitted.errors(), out.errors(), outNone.errors()
		cvAbs = append(cvAbs, out.abs...)
		noneAbs = append(noneAbs, outNone.abs...)
		res.Groups = append(res.Groups, g)
	}
	res.CVMedianAPE = calibrate.SummarizeAPE(cvAbs).MedianAPE
	res.NoneMedianAPE = calibrate.SummarizeAPE(noneAbs).MedianAPE
	res.BeatShare = pairedBeatShare(cvAbs, noneAbs)
	if res.CVMedianAPE < res.NoneMedianAPE && res.BeatShare >= calibrate.SelectionLevel {
		res.Kept, res.SyncUS = true, res.FittedSyncUS
	}
	return res, nil
}

// selectionSeed seeds the keep-or-drop resampling, so a fit is reproducible.
const selectionSeed = 0x6172737973796e63

// pairedBeatShare is the share of paired bootstrap resamples of the
// held-out rows in which the median of cand (absolute errors, %) is below
// that of cur on the same drawn rows; cand[i] and cur[i] are one row's
// errors with and without the spread. 0 when their lengths differ.
func pairedBeatShare(cand, cur []float64) float64 {
	return calibrate.MedianBeatShare(cand, cur, selectionSeed)
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

// fitSync returns the spread in [0, max grid] minimising the squared log
// TPOT error left within the cells (cellSSE) of the rows whose TP keep
// accepts, scanning in steps of fineStep (the first minimum wins).
func fitSync(rows []row, grid []float64, keep func(tp int) bool) float64 {
	best, bestV := math.Inf(1), 0.0
	hi := grid[len(grid)-1]
	for k := 0; float64(k)*fineStep <= hi+1e-9; k++ {
		v := float64(k) * fineStep
		if s := cellSSE(rows, grid, v, keep); s < best {
			best, bestV = s, v
		}
	}
	return bestV
}

// cellFactors returns, per cell with a row whose TP keep accepts, the mean
// log error log(measured / predicted at spread v) of those rows: the
// cell's own factor on every TP.
func cellFactors(rows []row, grid []float64, v float64, keep func(tp int) bool) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range rows {
		if keep(r.tp) {
			sum[r.cell] += math.Log(r.measured / interp(grid, r.pred, v))
			n[r.cell]++
		}
	}
	for c := range sum {
		sum[c] /= float64(n[c])
	}
	return sum
}

// cellSSE is the summed squared log error at spread v of the rows whose
// TP keep accepts, each taken from its cell's factor (cellFactors): what
// the spread, and nothing fixed per configuration, must explain. A cell
// of one row adds 0.
func cellSSE(rows []row, grid []float64, v float64, keep func(tp int) bool) float64 {
	f := cellFactors(rows, grid, v, keep)
	var s float64
	for _, r := range rows {
		if keep(r.tp) {
			d := math.Log(r.measured/interp(grid, r.pred, v)) - f[r.cell]
			s += d * d
		}
	}
	return s
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
