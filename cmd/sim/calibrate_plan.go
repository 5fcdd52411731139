package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/plan"
	"github.com/spf13/cobra"
)

// defaultPlanFile is the plan of the shipped profiles, relative to the
// repository root.
const defaultPlanFile = "hardware/profiles-plan.yaml"

type calibratePlanOptions struct {
	Plan      string
	Check     bool
	Tolerance float64
	Jobs      int
	Keep      string
	Only      []string
	Quiet     bool
}

func newCalibratePlanCmd(s streams) *cobra.Command {
	o := &calibratePlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Rebuild every shipped profile from the shared data, in the plan's order (--check: compare with the shipped files)",
		Long: `Run the steps of the rebuild plan (hardware/profiles-plan.yaml): the
'sim calibrate' commands, exactly as the profiles' provenance records them,
that build every per-release profile from ../shared/data (or $ROOFSIM_DATA).
A step waits for the earlier steps that name one of its profile files;
steps that share none run side by side (--jobs), which gives the same files
as running them in order. SIM_* environment variables do not apply to the
steps: each runs as its recorded command line.

Profile paths in the plan (hardware/profiles/..., engine/profiles/...)
are relative to the repository root, the directory above the plan's.
Without --check they are rewritten in place. With --check they are rebuilt into a temporary directory (or --keep)
and compared with the shipped files key by key: numbers within --tolerance
(relative), everything else (provenance commands, data checksums) exactly;
any differing key is listed and the command fails. Profiles the plan lists
as legacy are reported with the plan's reason and not rebuilt, except for
the trailing steps a legacy entry lists: those re-run on the shipped file
(with --check, on a copy of it) and the whole file is compared.

Progress goes to stderr: a bar on a terminal, a line every few seconds
otherwise (--quiet silences it).`,
		Example: `  sim calibrate plan --check
  sim calibrate plan --jobs 2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCalibratePlan(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Plan, "plan", defaultPlanFile, "plan file; its profile paths (hardware/profiles/..., engine/profiles/...) are relative to the directory above the plan's (the repository root)")
	f.BoolVar(&o.Check, "check", false, "rebuild into a temporary directory and compare with the shipped profiles")
	f.Float64Var(&o.Tolerance, "tolerance", 1e-6, "with --check: largest relative difference of a number that counts as equal, in [0, 0.1]")
	f.IntVar(&o.Jobs, "jobs", 0, "steps run at once (0: one per CPU)")
	f.StringVar(&o.Keep, "keep", "", "with --check: rebuild into this directory (created; must be empty) and keep it")
	f.StringSliceVar(&o.Only, "only", nil, "rebuild only these profiles (paths as the plan writes them, e.g. hardware/profiles/b200/vllm-0.24.0.yaml): the steps that name them and the steps those depend on; every file those steps write is compared")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output on stderr")
	return cmd
}

// planCheckError is a --check whose rebuild differs from the shipped
// profiles; Files names them.
type planCheckError struct{ Files []string }

func (e *planCheckError) Error() string {
	return fmt.Sprintf("calibrate plan --check: %d profile(s) differ from their rebuild: %s", len(e.Files), strings.Join(e.Files, ", "))
}

// planStepError is a plan step that failed: its index, command and error,
// with the end of what it printed on stderr.
type planStepError struct {
	Index   int
	Command string
	Err     error
	Stderr  string
}

func (e *planStepError) Error() string {
	msg := fmt.Sprintf("calibrate plan: steps[%d] (%s): %v", e.Index, e.Command, e.Err)
	if e.Stderr != "" {
		msg += "; its last output: " + e.Stderr
	}
	return msg
}

func (e *planStepError) Unwrap() error { return e.Err }

func runCalibratePlan(ctx context.Context, s streams, o *calibratePlanOptions) error {
	switch {
	case !(o.Tolerance >= 0 && o.Tolerance <= 0.1):
		return usageError{fmt.Errorf("calibrate plan: --tolerance: must be in [0, 0.1], got %g", o.Tolerance)}
	case o.Jobs < 0:
		return usageError{fmt.Errorf("calibrate plan: --jobs: must be >= 0, got %d", o.Jobs)}
	case o.Keep != "" && !o.Check:
		return usageError{fmt.Errorf("calibrate plan: --keep goes with --check")}
	}
	data, err := os.ReadFile(o.Plan)
	if err != nil {
		return fmt.Errorf("calibrate plan: --plan: %w", err)
	}
	p, err := plan.Parse(data, o.Plan)
	if err != nil {
		return fmt.Errorf("calibrate plan: %w", err)
	}
	files := p.Files()
	sel := make([]int, len(p.Steps))
	for i := range sel {
		sel[i] = i
	}
	if len(o.Only) > 0 {
		if sel, files, err = p.Select(o.Only); err != nil {
			return usageError{fmt.Errorf("calibrate plan: %w", err)}
		}
	}
	dataRoot := dataDir()
	if dataRoot == "" {
		return fmt.Errorf("calibrate plan: the shared data directory was not found (../shared/data beside the repository, or set ROOFSIM_DATA)")
	}
	shipped := filepath.Dir(filepath.Dir(o.Plan)) // the repository root
	out := shipped
	if o.Check {
		if out, err = planScratch(o.Keep); err != nil {
			return err
		}
		if o.Keep == "" {
			defer os.RemoveAll(out)
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(out, f)), 0o755); err != nil {
			return fmt.Errorf("calibrate plan: %w", err)
		}
	}
	if o.Check {
		// A file a step updates rather than creates starts from the shipped
		// copy (plan.Plan.Seeds).
		for _, f := range p.Seeds(files) {
			data, err := os.ReadFile(filepath.Join(shipped, f))
			if err != nil {
				return fmt.Errorf("calibrate plan: %w", err)
			}
			if err := os.WriteFile(filepath.Join(out, f), data, 0o644); err != nil {
				return fmt.Errorf("calibrate plan: %w", err)
			}
		}
	}
	start := time.Now()
	if err := runPlanSteps(ctx, s, p, sel, files, dataRoot, out, o); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "ran %d steps in %.0f s\n", len(sel), time.Since(start).Seconds())
	for _, l := range p.Legacy {
		if len(l.Steps) > 0 {
			fmt.Fprintf(s.out, "legacy %s: earlier stages not rebuilt: %s; its last %d stage(s) re-run as trailing steps\n", l.File, l.Reason, len(l.Steps))
			continue
		}
		fmt.Fprintf(s.out, "legacy %s: not rebuilt: %s\n", l.File, l.Reason)
	}
	if !o.Check {
		for _, f := range files {
			fmt.Fprintf(s.out, "wrote %s\n", filepath.Join(out, f))
		}
		return nil
	}
	var bad []string
	for _, f := range files {
		diffs, err := comparePlanFile(filepath.Join(shipped, f), filepath.Join(out, f), o.Tolerance)
		if err != nil {
			return fmt.Errorf("calibrate plan: %s: %w", f, err)
		}
		if len(diffs) == 0 {
			fmt.Fprintf(s.out, "ok %s\n", f)
			continue
		}
		bad = append(bad, f)
		fmt.Fprintf(s.out, "differs %s (%d keys):\n", f, len(diffs))
		for _, d := range diffs {
			fmt.Fprintf(s.out, "  %s\n", d)
		}
	}
	if o.Keep != "" {
		fmt.Fprintf(s.out, "rebuilt profiles kept in %s\n", out)
	}
	if len(bad) > 0 {
		return &planCheckError{Files: bad}
	}
	return nil
}

// planScratch is the directory a --check rebuilds into: keep (created,
// must be empty) or a new temporary directory.
func planScratch(keep string) (string, error) {
	if keep == "" {
		d, err := os.MkdirTemp("", "roofsim-plan-")
		if err != nil {
			return "", fmt.Errorf("calibrate plan: %w", err)
		}
		return d, nil
	}
	if err := os.MkdirAll(keep, 0o755); err != nil {
		return "", fmt.Errorf("calibrate plan: --keep: %w", err)
	}
	if ents, err := os.ReadDir(keep); err != nil || len(ents) > 0 {
		if err == nil {
			err = errors.New("is not empty")
		}
		return "", usageError{fmt.Errorf("calibrate plan: --keep %s: %w", keep, err)}
	}
	return keep, nil
}

// comparePlanFile compares the shipped profile with its rebuild.
func comparePlanFile(shipped, rebuilt string, tol float64) ([]plan.Diff, error) {
	a, err := os.ReadFile(shipped)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(rebuilt)
	if err != nil {
		return nil, err
	}
	return plan.Compare(a, b, tol)
}

// runPlanSteps runs the steps sel of p, which write files, with at most
// o.Jobs at once. Whenever a slot is free it starts the first step, in plan
// order, whose earlier steps it depends on (plan.Plan.Deps) are done. The
// first failure stops the steps not yet started and is returned.
func runPlanSteps(ctx context.Context, s streams, p *plan.Plan, sel []int, files []string, dataRoot, outDir string, o *calibratePlanOptions) error {
	jobs := o.Jobs
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The MoE refit of a GPU and release fits the same families, on the
	// same rows, as its kernel fit: the cache answers them.
	ctx = withFitCache(ctx, kernels.NewFitCache())
	bar := newMeter(s.errOut, int64(len(sel)), o.Quiet, "rebuilding profiles", "steps")
	defer bar.Finish()
	// A step not selected counts as done: nothing waits for it.
	done := make([]bool, len(p.Steps))
	for i := range done {
		done[i] = !slices.Contains(sel, i)
	}
	started := make([]bool, len(p.Steps))
	type result struct {
		i   int
		err error
	}
	results := make(chan result)
	running, finished := 0, 0
	var first error
	for finished < len(sel) {
		for _, i := range sel {
			if running >= jobs || first != nil {
				break
			}
			waiting := slices.ContainsFunc(p.Deps(i), func(d int) bool { return !done[d] })
			if started[i] || waiting {
				continue
			}
			started[i] = true
			running++
			go func() { results <- result{i, runPlanStep(ctx, p, i, dataRoot, outDir)} }()
		}
		if running == 0 {
			break // stopped by a failure: nothing left in flight
		}
		r := <-results
		running--
		finished++
		done[r.i] = true
		if r.err != nil && first == nil {
			first = r.err
			cancel()
			continue
		}
		bar.Set(int64(finished))
		bar.Note(fmt.Sprintf("steps[%d] done: %s", r.i, planStepLabel(p.Steps[r.i].Run)))
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}

// fitCacheKey is the context key of a plan run's family-fit cache.
type fitCacheKey struct{}

// withFitCache returns ctx carrying c: the kernel and MoE fits of the
// commands run under it share c (kernels.FitCache).
func withFitCache(ctx context.Context, c *kernels.FitCache) context.Context {
	return context.WithValue(ctx, fitCacheKey{}, c)
}

// fitCacheOf is the family-fit cache ctx carries, or nil.
func fitCacheOf(ctx context.Context) *kernels.FitCache {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(fitCacheKey{}).(*kernels.FitCache)
	return c
}

// runPlanStep runs step i in this process: its own words are the command
// line recorded in the profiles' provenance, its paths are mapped onto
// dataRoot and outDir (plan.Rewrite). SIM_* variables are not applied.
func runPlanStep(ctx context.Context, p *plan.Plan, i int, dataRoot, outDir string) error {
	words := p.Steps[i].Args()
	// A command's progress meter writes from its own goroutine beside the
	// command's notes: the buffers take one writer at a time.
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	st := streams{in: strings.NewReader(""), out: stdout, errOut: stderr, args: words}
	root := newRootCmd(st)
	root.PersistentPreRunE = nil
	root.SetArgs(plan.Rewrite(words, dataRoot, outDir))
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		return &planStepError{Index: i, Command: p.Steps[i].Run, Err: err, Stderr: lastLines(stderr.String(), 3)}
	}
	return nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// planStepLabel shortens a step's command for progress notes: its first
// eight words.
func planStepLabel(run string) string {
	w := strings.Fields(run)
	if len(w) > 8 {
		w = w[:8]
	}
	return strings.Join(w, " ")
}

// lastLines is the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, l)
		}
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}
