// Package kernels fits a GPU's efficiency profile to measured kernel
// timings (GEMM per precision, prefill and decode attention, fused MoE,
// all-reduce per GPU count) and reports how well a profile predicts them.
// The tables come from an adapter at the edge (package
// calibrate/aiconfigurator reads NVIDIA AIConfigurator's CSV layouts)
// through the one-method Source interface.
//
// Reading order: tables.go (the measured rows and Source), costs.go (each
// row as a roofline.Cost), families.go (rows grouped into the profile's
// operator families, as Samples), fit.go (quasi-Newton fit of one family's
// OpEfficiency on log time), allreduce.go (latency + bandwidth fit of
// all-reduce), calibrate.go (Calibrate: hold-out split, fits, error table,
// profile), validate.go (Validate: errors of a profile on every row).
//
// The model fitted is the step model's per-operator formula,
// roofline.OpSeconds:
//
//	t = max(F/(P eff_c(F)), B/(W eff_m(B))) + LaunchUS 1e-6
//
// GEMM families may instead index eff_c by the output tile count
// ceil(m/TileM) ceil(n/TileN) (hardware.OpEfficiency.ComputeIndex); the fit
// tries FLOPs and a few tilings and keeps the lowest training error.
package kernels

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// Options configures Calibrate.
type Options struct {
	// GPU is the catalog GPU whose peaks and bandwidth the fit is relative
	// to. Required.
	GPU *hardware.GPU
	// Seed drives the hold-out split and the optimizer restarts.
	Seed uint64
	// HoldoutFraction is the share of each family's rows held out of the
	// first fit to measure prediction error, in [0, 0.5]; 0.2 is usual.
	HoldoutFraction float64
	// Restarts is the number of wide random starts per family (>= 1;
	// 0 means 8).
	Restarts int
	// Command is the command line recorded in the profile's kernels stage.
	Command string
	// DataDir is the shared data directory: the stage records the tables'
	// paths relative to it when they lie inside it ("" keeps them as
	// read).
	DataDir string
	// Workers is the number of families fitted at once (0 = GOMAXPROCS).
	// Families are independent and their results are collected in a
	// fixed order, so the outcome does not depend on it.
	Workers int
	// MoEPerShape, for CalibrateMoE: also fit every expert shape the moe
	// table measured without EP on its own rows and keep the entries that
	// predict their held-out token band better than the per-format curve
	// (MoEShapeFit).
	MoEPerShape bool
	// MoEShapesOnly, for CalibrateMoE: fit only the shape entries (as
	// MoEPerShape), against the GPU profile's own per-format curves, which
	// are kept unchanged; the result has no per-format families.
	MoEShapesOnly bool
	// Start, when set, is the profile the fit starts from: the sections it
	// does not fit keep its values (hardware.GPU.KernelFitStart). nil: the
	// GPU's own calibrated profile, else the built-in defaults.
	Start *hardware.Profile
	// Cache, when set, answers family fits already made in this process
	// with the same inputs (FitCache); the result is the same as without.
	Cache *FitCache
	// Progress, when set, is called once the families are known (done 0,
	// family "") and after each family's fits with the families done so
	// far, the total and the family just finished. Calls are serialised;
	// it must not block for long.
	Progress func(done, total int, family string)
}

// DefaultOptions returns Options with HoldoutFraction 0.2, Seed 1 and 8
// restarts.
func DefaultOptions() Options { return Options{Seed: 1, HoldoutFraction: 0.2, Restarts: 8} }

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	switch {
	case o.GPU == nil:
		return fmt.Errorf("gpu: is required")
	case !(o.HoldoutFraction >= 0 && o.HoldoutFraction <= 0.5):
		return fmt.Errorf("holdout_fraction: must be in [0, 0.5], got %g", o.HoldoutFraction)
	case o.Restarts < 0:
		return fmt.Errorf("restarts: must be >= 0, got %d", o.Restarts)
	}
	return o.GPU.Validate()
}

// FamilyError is the fit quality of one operator family: errors on the
// rows it was fitted on (Train) and on the held-out rows (Holdout), both
// from the fit on the training split.
type FamilyError struct {
	Family  string             `json:"family"`
	Train   calibrate.APEStats `json:"train"`
	Holdout calibrate.APEStats `json:"holdout"`
	// Extrapolated counts held-out rows whose FLOPs or bytes lie outside
	// the training rows' range.
	Extrapolated int `json:"extrapolated"`
}

// SizeRange is the span of work sizes a family was fitted on.
type SizeRange struct {
	MinFLOPs, MaxFLOPs float64
	MinBytes, MaxBytes float64
}

// Contains reports whether (flops, bytes) lies inside the range.
func (r SizeRange) Contains(flops, bytes float64) bool {
	return flops >= r.MinFLOPs && flops <= r.MaxFLOPs && bytes >= r.MinBytes && bytes <= r.MaxBytes
}

// Result is the outcome of Calibrate.
type Result struct {
	// Profile is the shipped profile, refitted on all rows.
	Profile *hardware.Profile `json:"profile"`
	// GPU is a copy of the input GPU with Profile embedded.
	GPU *hardware.GPU `json:"-"`
	// Families are the per-family errors, in a fixed order.
	Families []FamilyError `json:"families"`
	// Ranges are the fitted work-size ranges by family (all rows).
	Ranges map[string]SizeRange `json:"-"`
	// Files are the tables read and their row counts.
	Files []FileCount `json:"files"`
	// Warnings flag doubtful results (too few rows, a curve maximum at its
	// bound, extrapolation, skipped rows, unfitted families).
	Warnings []string `json:"warnings"`
	// MoEShapes are the per-shape fused-MoE fits (Options.MoEPerShape), in
	// key order.
	MoEShapes []MoEShapeFit `json:"moe_shapes,omitempty"`
	// MoETiles are the grouped cross-validations that chose which
	// fused-MoE families carry the DefaultTiles term (families with rows
	// of both tuned and default tile configurations only).
	MoETiles []MoETilesChoice `json:"moe_default_tiles,omitempty"`
	// MemoryIndex are the shape-slice cross-validations that chose which
	// families read their memory curve at bytes per (request, KV head)
	// pair (MemoryIndexChoice), in family order.
	MemoryIndex []MemoryIndexChoice `json:"memory_index,omitempty"`
	// HostFloors are the choices, per GEMM family with a reference family,
	// between its free fit and a fit with the benchmark's host floor
	// (applyHostFloors).
	HostFloors []HostFloorChoice `json:"host_floors,omitempty"`
}

// minRows is the row count below which a family fit is flagged.
const minRows = 30

// Calibrate reads the kernel tables of src and fits the GPU's profile. For every family it splits the rows with a seeded shuffle,
// fits on the training part, reports train and held-out errors, then refits
// on all rows for the shipped profile. Families without a table keep the
// default (the element-wise family always does: there is no table).
func Calibrate(src Source, opts Options) (*Result, error) {
	k, opts, err := readForFit(src, opts)
	if err != nil {
		return nil, err
	}
	return calibrateTables(k, opts)
}

// readForFit checks opts (Restarts 0 becomes 8) and reads src's tables:
// the common start of Calibrate and CalibrateMoE.
func readForFit(src Source, opts Options) (*Tables, Options, error) {
	if err := opts.Validate(); err != nil {
		return nil, opts, err
	}
	if src == nil {
		return nil, opts, fmt.Errorf("source: is required")
	}
	if opts.Restarts == 0 {
		opts.Restarts = 8
	}
	k, err := src.Tables()
	return k, opts, err
}

func familySeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

// split returns the train and holdout index sets of n rows.
func split(n int, frac float64, seed uint64) (train, hold []int) {
	perm := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d)).Perm(n)
	nh := int(math.Round(frac * float64(n)))
	if n-nh < 1 {
		nh = n - 1
	}
	hold, train = perm[:nh], perm[nh:]
	sort.Ints(hold)
	sort.Ints(train)
	return train, hold
}

func pick[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

func rangeOf(ss []Sample) SizeRange {
	r := SizeRange{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for _, s := range ss {
		r.MinFLOPs, r.MaxFLOPs = math.Min(r.MinFLOPs, s.FLOPs), math.Max(r.MaxFLOPs, s.FLOPs)
		r.MinBytes, r.MaxBytes = math.Min(r.MinBytes, s.Bytes), math.Max(r.MaxBytes, s.Bytes)
	}
	return r
}

func apes(ss []Sample, e hardware.OpEfficiency) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = calibrate.APE(s.Predict(e), s.Seconds)
	}
	return out
}

func calibrateTables(k *Tables, opts Options) (*Result, error) {
	g := opts.GPU
	def := hardware.DefaultProfile()
	prof := g.EffectiveProfile().Clone()
	switch {
	case opts.Start != nil:
		prof = opts.Start.Clone()
	case !prof.Calibrated || prof.BorrowedFrom != "":
		// A borrowed profile is another GPU's: a GPU's own fit starts from
		// the defaults, not from the donor's terms.
		prof = def.Clone()
	}
	prof.GEMMByPrecision = nil
	prof.Calibrated = true
	prof.Engine = k.Engine
	res := &Result{Ranges: map[string]SizeRange{}, Files: k.Files}
	fams, warns := families(k, g)
	res.Warnings = append(res.Warnings, warns...)
	var err error
	if res.MoETiles, err = applyMoETilesSelection(fams, def, opts.Seed); err != nil {
		return nil, err
	}
	if res.MemoryIndex, err = applyMemoryIndexSelection(fams, def, opts.Seed); err != nil {
		return nil, err
	}
	ns, _ := allReduceByGPUs(k)
	total := len(fams) + len(ns)
	var mu sync.Mutex
	done := 0
	report := func(name string) {
		if opts.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		opts.Progress(done, total, name)
	}
	if opts.Progress != nil {
		opts.Progress(0, total, "")
	}
	outs := make([]familyFit, len(fams))
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(workers, len(fams)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outs[i] = opts.Cache.fit(fams[i], def, opts)
				report(fams[i].name)
			}
		}()
	}
	for i := range fams {
		next <- i
	}
	close(next)
	wg.Wait()
	if res.HostFloors, err = applyHostFloors(fams, outs, opts); err != nil {
		return nil, err
	}
	for i, f := range fams {
		o := outs[i]
		res.Warnings = append(res.Warnings, o.warnings...)
		if o.err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, o.err)
		}
		if o.skipped {
			continue
		}
		res.Ranges[f.name] = rangeOf(f.samples)
		f.set(prof, o.eff)
		res.Families = append(res.Families, o.fe)
	}
	if err := calibrateAllReduce(k, opts, prof, res, report); err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, "elementwise: no kernel table; keeping the default curve")
	prof.Provenance = hardware.Provenance{kernelsStage(opts, k)}
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("fitted profile is invalid (a bug): %w", err)
	}
	res.Profile = prof
	res.GPU = g.Clone()
	res.GPU.Profile = prof.Clone()
	return res, nil
}

// familyFit is the outcome of one family's fits.
type familyFit struct {
	fe       FamilyError
	eff      hardware.OpEfficiency
	warnings []string
	skipped  bool // no usable rows: the default stays
	err      error
}

// fitFamily splits f's rows, fits the training part and reports train and
// held-out errors, then refits on all rows for the profile. It reads only
// its arguments, so families can be fitted concurrently.
func fitFamily(f opFamily, def *hardware.Profile, opts Options) familyFit {
	var out familyFit
	if len(f.samples) == 0 {
		out.skipped = true
		out.warnings = append(out.warnings, f.name+": no usable rows; keeping the default")
		return out
	}
	if len(f.samples) < minRows {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: only %d rows (< %d): fit is weakly constrained", f.name, len(f.samples), minRows))
	}
	seed := familySeed(opts.Seed, f.name)
	init := f.start(def)
	fe := FamilyError{Family: f.name}
	var warm *[nParams]float64
	if opts.HoldoutFraction > 0 && len(f.samples) >= 2 {
		tr, ho := split(len(f.samples), opts.HoldoutFraction, seed)
		train, hold := pick(f.samples, tr), pick(f.samples, ho)
		fit, err := fitTiled(train, init, f.tiles, seed, opts.Restarts)
		if err != nil {
			out.err = err
			return out
		}
		// The tiling is chosen on the training rows only.
		init.TileM, init.TileN = fit.Efficiency.TileM, fit.Efficiency.TileN
		f.tiles = nil
		warm = &fit.x
		var w []string
		fe, w = holdoutErrors(f.name, train, hold, fit.Efficiency)
		out.warnings = append(out.warnings, w...)
	}
	// The refit on all rows starts from the training fit, which saw 80% of
	// them: its optimum is next to the full one, so the search needs no
	// random restarts.
	var full FitResult
	var err error
	if warm != nil {
		full, err = fitOp(f.samples, init, seed, fitOptions{restarts: opts.Restarts, warm: warm})
	} else {
		full, err = fitTiled(f.samples, init, f.tiles, seed, opts.Restarts)
	}
	if err != nil {
		out.err = err
		return out
	}
	if opts.HoldoutFraction == 0 {
		fe.Train = calibrate.SummarizeAPE(apes(f.samples, full.Efficiency))
	}
	out.warnings = append(out.warnings, boundWarnings(f.name, full.Efficiency)...)
	out.fe, out.eff = fe, full.Efficiency
	return out
}

// holdoutErrors are family name's errors of e, fitted on train, on train
// and on hold, with a warning when held-out rows lie outside the training
// rows' size range.
func holdoutErrors(name string, train, hold []Sample, e hardware.OpEfficiency) (FamilyError, []string) {
	fe := FamilyError{Family: name, Train: calibrate.SummarizeAPE(apes(train, e)), Holdout: calibrate.SummarizeAPE(apes(hold, e))}
	rg := rangeOf(train)
	for _, s := range hold {
		if !rg.Contains(s.FLOPs, s.Bytes) {
			fe.Extrapolated++
		}
	}
	if fe.Extrapolated == 0 {
		return fe, nil
	}
	return fe, []string{fmt.Sprintf("%s: %d held-out rows lie outside the training size range (extrapolation)", name, fe.Extrapolated)}
}

// fitTiled fits samples with each tiling in tiles (init's own when tiles
// is empty) and returns the fit with the lowest loss (FitResult.Loss).
func fitTiled(samples []Sample, init hardware.OpEfficiency, tiles [][2]int, seed uint64, restarts int) (FitResult, error) {
	if len(tiles) == 0 {
		return FitOpEfficiency(samples, init, seed, restarts)
	}
	var best FitResult
	for i, t := range tiles {
		in := init
		in.TileM, in.TileN = t[0], t[1]
		fit, err := FitOpEfficiency(samples, in, seed, restarts)
		if err != nil {
			return FitResult{}, err
		}
		if i == 0 || fit.Loss < best.Loss {
			best = fit
		}
	}
	return best, nil
}

func boundWarnings(name string, e hardware.OpEfficiency) []string {
	var w []string
	for _, c := range []struct {
		which string
		c     hardware.Curve
	}{{"compute", e.Compute}, {"memory", e.Memory}} {
		if c.c.Max > 0.995 {
			w = append(w, fmt.Sprintf("%s: fitted %s max %.4f is at the bound 1 (the roofline peak itself)", name, c.which, c.c.Max))
		}
		if c.c.Exp <= minExp*1.01 || c.c.Exp >= maxExp*0.99 {
			w = append(w, fmt.Sprintf("%s: fitted %s exp %.3f is at its bound [%g, %g]", name, c.which, c.c.Exp, minExp, maxExp))
		}
	}
	return w
}

func calibrateAllReduce(k *Tables, opts Options, prof *hardware.Profile, res *Result, report func(string)) error {
	ns, byN := allReduceByGPUs(k)
	if len(ns) == 0 {
		res.Warnings = append(res.Warnings, "allreduce: no all-reduce rows; keeping the default")
		return nil
	}
	prof.AllReduce.ByGPUs = map[int]hardware.AllReducePoint{}
	for _, n := range ns {
		ps := byN[n]
		name := fmt.Sprintf("%s%d", FamilyAllReducePrefix, n)
		if len(ps) < 8 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: only %d message sizes: fit is weakly constrained", name, len(ps)))
		}
		fe := FamilyError{Family: name}
		arAPE := func(ss []ARPoint, pt hardware.AllReducePoint) []float64 {
			out := make([]float64, len(ss))
			for i, p := range ss {
				out[i] = calibrate.APE(pt.Seconds(p.Bytes, n), p.Seconds)
			}
			return out
		}
		if opts.HoldoutFraction > 0 && len(ps) >= 3 {
			tr, ho := split(len(ps), opts.HoldoutFraction, familySeed(opts.Seed, name))
			train, hold := pick(ps, tr), pick(ps, ho)
			fit, err := FitAllReduce(train, n)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fe.Train = calibrate.SummarizeAPE(arAPE(train, fit))
			fe.Holdout = calibrate.SummarizeAPE(arAPE(hold, fit))
		}
		full, err := FitAllReduce(ps, n)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if opts.HoldoutFraction == 0 || len(ps) < 3 {
			fe.Train = calibrate.SummarizeAPE(arAPE(ps, full))
		}
		prof.AllReduce.ByGPUs[n] = full
		res.Families = append(res.Families, fe)
		report(name)
	}
	// The top-level values serve GPU counts without a fit: take the
	// largest fitted count (the most conservative bandwidth).
	top := prof.AllReduce.ByGPUs[ns[len(ns)-1]]
	prof.AllReduce.LatencyUS, prof.AllReduce.BusBandwidthGBps = top.LatencyUS, top.BusBandwidthGBps
	return nil
}

// kernelsStage is the provenance stage of a fit to k: the command, each
// table with its rows and checksum, and the data set's licence as note.
func kernelsStage(opts Options, k *Tables) hardware.Stage {
	cmd := opts.Command
	if cmd == "" {
		cmd = fmt.Sprintf("kernels.Calibrate(seed=%d, holdout=%g)", opts.Seed, opts.HoldoutFraction)
	}
	st := hardware.Stage{Stage: hardware.StageKernels, Command: cmd, Note: k.Provenance}
	for _, c := range k.Files {
		st.Data = append(st.Data, hardware.DataFile{Path: hardware.DataPath(filepath.Join(k.Dir, c.File), opts.DataDir), SHA256: c.SHA256, Rows: c.Rows})
	}
	return st
}
