// Package report builds the project's accuracy report: every validator the
// project has, run on the measured data beside the repository
// (../shared/data), each prediction error summarised per source, GPU,
// engine release, model and metric, with the error of the shipped profiles
// ("fitted") and of a refit that never saw the group ("cross-validated")
// in separate columns. docs/accuracy.md's tables and the README's headline
// numbers are generated from it (markdown.go).
//
// Reading order: stats.go (the error statistics and their seeded
// bootstrap intervals), report.go (the report, its entries and Build),
// then one file per source: kernels.go, steps.go, serving.go, gb10.go;
// markdown.go renders the report.
package report

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
)

// Schema is the version of the report's JSON layout.
const Schema = 1

// Report is the accuracy report.
type Report struct {
	Schema int `json:"schema"`
	// Command is the command that wrote the report.
	Command   string        `json:"command"`
	Bootstrap BootstrapSpec `json:"bootstrap"`
	// Sources says, per source, what was predicted and how it was
	// cross-validated (or why it was not).
	Sources []SourceNote `json:"sources"`
	// Entries are the error summaries, sorted by source, GPU, engine, model
	// and metric.
	Entries []Entry `json:"entries"`
	// TermSelections are the grouped cross-validations that decide between
	// alternative forms of a term (termselect.go).
	TermSelections []TermSelection `json:"term_selections,omitempty"`
}

// SourceNote describes one source of the report.
type SourceNote struct {
	Source string `json:"source"`
	// Data are the data files or folders read, relative to the data
	// directory.
	Data []string `json:"data,omitempty"`
	// Fitted says what the fitted column is: which profile predicted what,
	// and which of these rows that profile's fit saw.
	Fitted string `json:"fitted"`
	// CrossValidated says how the cross-validated column was obtained.
	CrossValidated string `json:"cross_validated"`
	// Absent, when set, says why the source has no entries at all.
	Absent string `json:"absent,omitempty"`
}

// Entry is the errors of one group of predictions.
type Entry struct {
	Source string `json:"source"`
	GPU    string `json:"gpu"`
	// Engine is the serving engine release the data were measured with.
	Engine string `json:"engine"`
	// Model is the served model ("-" for kernel tables).
	Model string `json:"model"`
	// Metric is what was predicted: an operator family, a step kind, a
	// serving metric (ttft, tpot), a llama-bench rate (prefill, decode).
	Metric string `json:"metric"`
	// Unit is the predicted quantity's unit; a positive bias means the
	// prediction is larger (slower, for times; faster, for rates).
	Unit   string `json:"unit"`
	Fitted Stats  `json:"fitted"`
	// CrossValidated is nil when no grouped refit exists for the entry;
	// CVAbsent then says why.
	CrossValidated *Stats `json:"cross_validated"`
	CVAbsent       string `json:"cross_validated_absent,omitempty"`
	// CVGroup says what was held out of each refit (the group the
	// cross-validated errors are of).
	CVGroup string `json:"cross_validated_group,omitempty"`
}

// group is what a source hands Build: an entry's labels and its pairs.
type group struct {
	source, gpu, engine, model, metric, unit string
	fitted, cv                               []Pair
	// cvGroup names the held-out group of the cross-validation; cvAbsent
	// why there is none.
	cvGroup, cvAbsent string
}

// Options configures Build.
type Options struct {
	// DataDir is the measured data directory (../shared/data).
	DataDir string
	// Sources limits the report to these sources (SourceNames); nil means
	// all.
	Sources []string
	// Bootstrap is the interval specification; zero means DefaultBootstrap.
	Bootstrap BootstrapSpec
	// KernelFolds and KernelRestarts configure the kernels' shape-slice
	// cross-validation (kernels.CVOptions); 0 means 3 folds and 1 restart.
	KernelFolds, KernelRestarts int
	// Command is recorded in the report.
	Command string
	// Progress, when set, is called with a line saying what runs next.
	Progress func(what string)

	// transfer holds both transfer sources' results, computed by the
	// first of them to run (transfer.go).
	transfer *transferResults
}

// The report's sources.
const (
	SourceKernels    = "kernels"
	SourceSteps      = "fpm_steps"
	SourceClosedLoop = "closed_loop"
	SourceGB10       = "gb10_llamacpp"
	SourceOpenLoop   = "open_loop"
	// SourceReleaseTransfer and SourceGPUTransfer predict each GPU's
	// AIConfigurator tables at each release with a profile fitted on
	// another release of the GPU, or on another GPU (transfer.go).
	SourceReleaseTransfer = "release_transfer"
	SourceGPUTransfer     = "gpu_transfer"
)

// SourceNames lists the sources in report order.
func SourceNames() []string {
	return []string{SourceKernels, SourceSteps, SourceClosedLoop, SourceGB10, SourceOpenLoop, SourceReleaseTransfer, SourceGPUTransfer}
}

// sourceFunc runs one source: its note, its groups and the term forms it
// chose by cross-validation.
type sourceFunc func(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error)

func sources() map[string]sourceFunc {
	return map[string]sourceFunc{
		SourceKernels:         kernelGroups,
		SourceSteps:           stepGroups,
		SourceClosedLoop:      closedLoopGroups,
		SourceGB10:            gb10Groups,
		SourceOpenLoop:        openLoopGroups,
		SourceReleaseTransfer: releaseTransferGroups,
		SourceGPUTransfer:     gpuTransferGroups,
	}
}

// UnknownSourceError is a source name Build does not know.
type UnknownSourceError struct{ Name string }

func (e *UnknownSourceError) Error() string {
	return fmt.Sprintf("unknown source %q (known: %v)", e.Name, SourceNames())
}

// Build runs the sources o selects on o.DataDir and summarises their
// errors. It is deterministic: the same data and options give the same
// report.
func Build(ctx context.Context, o Options) (*Report, error) {
	if o.DataDir == "" {
		return nil, fmt.Errorf("data: a data directory is required")
	}
	if o.Bootstrap == (BootstrapSpec{}) {
		o.Bootstrap = DefaultBootstrap()
	}
	if !(o.Bootstrap.Level > 0 && o.Bootstrap.Level < 1) || o.Bootstrap.Resamples < 0 {
		return nil, fmt.Errorf("bootstrap: level must be in (0, 1) and resamples >= 0, got %g and %d", o.Bootstrap.Level, o.Bootstrap.Resamples)
	}
	names := o.Sources
	if len(names) == 0 {
		names = SourceNames()
	}
	run := sources()
	for _, n := range names {
		if _, ok := run[n]; !ok {
			return nil, &UnknownSourceError{Name: n}
		}
	}
	rep := &Report{Schema: Schema, Command: o.Command, Bootstrap: o.Bootstrap}
	for _, n := range SourceNames() {
		if !slices.Contains(names, n) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.progress("source " + n)
		note, groups, sel, err := run[n](ctx, &o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		note.Source = n
		rep.Sources = append(rep.Sources, note)
		rep.TermSelections = append(rep.TermSelections, sel...)
		for _, g := range withTotals(groups) {
			rep.Entries = append(rep.Entries, g.entry(o.Bootstrap))
		}
	}
	slices.SortStableFunc(rep.Entries, func(a, b Entry) int { return slices.Compare(a.sortKey(), b.sortKey()) })
	return rep, nil
}

func (o *Options) progress(what string) {
	if o.Progress != nil {
		o.Progress(what)
	}
}

// All is the label of an entry that pools every GPU, engine or model of a
// source and metric.
const All = "all"

// withTotals appends to groups, for each (source, metric) with more than
// one group, the pooled group over all of them (GPU, engine and model
// "all"). A pooled group has a cross-validated column only when every
// group in it has one.
func withTotals(groups []group) []group {
	type key struct{ source, metric string }
	var order []key
	pooled := map[key]*group{}
	count := map[key]int{}
	for _, g := range groups {
		k := key{g.source, g.metric}
		p, ok := pooled[k]
		if !ok {
			p = &group{source: g.source, gpu: All, engine: All, model: All, metric: g.metric, unit: g.unit, cvGroup: g.cvGroup}
			pooled[k] = p
			order = append(order, k)
		}
		count[k]++
		p.fitted = append(p.fitted, g.fitted...)
		switch {
		case p.cvAbsent != "":
		case g.cvAbsent != "" || g.cv == nil:
			p.cv, p.cvAbsent = nil, "not every group has a cross-validated column: "+g.cvAbsent
		default:
			p.cv = append(p.cv, g.cv...)
		}
	}
	out := slices.Clone(groups)
	for _, k := range order {
		if count[k] > 1 {
			out = append(out, *pooled[k])
		}
	}
	return out
}

// entry summarises g with intervals seeded by b and g's labels.
func (g *group) entry(b BootstrapSpec) Entry {
	e := Entry{Source: g.source, GPU: g.gpu, Engine: g.engine, Model: g.model, Metric: g.metric, Unit: g.unit,
		CVAbsent: g.cvAbsent, CVGroup: g.cvGroup}
	e.Fitted = summarize(g.fitted, b, hashKey("fitted", g.source, g.gpu, g.engine, g.model, g.metric))
	if g.cvAbsent == "" && len(g.cv) > 0 {
		s := summarize(g.cv, b, hashKey("cv", g.source, g.gpu, g.engine, g.model, g.metric))
		e.CrossValidated = &s
	} else if e.CVAbsent == "" {
		e.CVAbsent = "no cross-validated prediction for this group"
	}
	if e.CrossValidated == nil {
		e.CVGroup = ""
	}
	return e
}

// sortKey orders entries: by source (report order), then GPU, engine, model
// and metric, the pooled "all" entries last within their source.
func (e Entry) sortKey() []string {
	src := fmt.Sprintf("%02d", slices.Index(SourceNames(), e.Source))
	pooled := "0"
	if e.GPU == All && e.Model == All {
		pooled = "1"
	}
	return []string{src, pooled, e.GPU, e.Engine, e.Model, e.Metric}
}

func hashKey(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
