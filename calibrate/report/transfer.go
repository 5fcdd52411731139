package report

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
)

// The transfer sources predict each GPU's AIConfigurator kernel tables, at
// every vLLM release that has them, with a profile that never saw them: no
// refit, prediction only (aiconfigurator.PredictWith).

// aicDir is the AIConfigurator database, relative to the data directory.
const aicDir = "aic"

// transferSource is one transfer source's result.
type transferSource struct {
	groups []group
	// seen are the (GPU, profile, table bytes) of the groups reported: a
	// release whose tables are another's (reuse.yaml, the nearest earlier
	// release's) repeats no rows.
	seen map[string]bool
	// used lists, per GPU and release, the profile that predicted; left
	// what was not reported and why.
	used, left []string
}

// transferResults are both transfer sources' results, computed together
// (each GPU and release's tables are read and priced once) and kept in
// Options for whichever source runs second.
type transferResults struct {
	release, gpu transferSource
}

// transfers computes both transfer sources over every (GPU, release) of
// the database whose system is a catalog GPU and whose release has a GEMM
// table (its own or a reuse.yaml donor's), in system then release order.
func transfers(ctx context.Context, o *Options) (*transferResults, error) {
	if o.transfer != nil {
		return o.transfer, nil
	}
	db, err := aic.Open(filepath.Join(o.DataDir, aicDir))
	if err != nil {
		return nil, err
	}
	systems, err := db.SystemNames()
	if err != nil {
		return nil, err
	}
	res := &transferResults{release: transferSource{seen: map[string]bool{}}, gpu: transferSource{seen: map[string]bool{}}}
	for _, sys := range systems {
		g, err := hardware.Lookup(sys)
		if err != nil {
			continue // a system the catalog does not name
		}
		rels, err := db.Releases(sys, aic.TableGEMM.Family())
		if err != nil {
			return nil, err
		}
		// Newest first: where one release reuses another's table, the
		// rows are reported under the release that measured them
		// (reuse.yaml donors are the newer release).
		slices.Reverse(rels)
		for _, rel := range rels {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, err := db.Resolve(sys, aic.TableGEMM, rel); err != nil {
				continue
			}
			if err := transferPair(db, sys, g, rel, res, o); err != nil {
				return nil, fmt.Errorf("%s vllm %s: %w", sys, rel, err)
			}
		}
	}
	o.transfer = res
	return res, nil
}

// transferPair reads g's tables at rel and adds its groups to both
// sources of res.
func transferPair(db *aic.DB, sys string, g *hardware.GPU, rel aic.Release, res *transferResults, o *Options) error {
	e, err := engine.Parse("vllm@" + rel.String())
	if err != nil {
		return err
	}
	where := fmt.Sprintf("%s vllm-%s", g.Name, rel)
	o.progress("transfer: " + where)
	k, _, err := aiconfigurator.ReadAIC(db, sys, rel, aiconfigurator.EnginePolicy(e, g))
	if err != nil {
		return err
	}
	pr := kernels.Prepare(g, k)
	pick, err := aiconfigurator.Pick(g, e)
	if err != nil {
		return err
	}
	picked, err := aiconfigurator.PredictWith(pr, pick.Profile, nil)
	if err != nil {
		return err
	}
	add := func(ts *transferSource, source, cvGroup string, held aiconfigurator.ProfileChoice) error {
		fitted, err := aiconfigurator.FittedTables(db, held.Owner, held.Profile)
		if err != nil {
			return err
		}
		cv, err := aiconfigurator.PredictWith(pr, held.Profile, fitted)
		if err != nil {
			return err
		}
		var training, repeated []string
		for i, f := range cv {
			if f.Training {
				training = append(training, f.Family)
				continue
			}
			key := strings.Join(append([]string{g.Name, held.Label, f.Family}, tableSHAs(k, f.Family)...), " ")
			if ts.seen[key] {
				repeated = append(repeated, f.Family)
				continue
			}
			ts.seen[key] = true
			ts.groups = append(ts.groups, group{source: source, gpu: g.Name, engine: "vllm-" + rel.String(), model: "-",
				metric: f.Family, unit: "s", fitted: pairsOf(picked[i].Pred, picked[i].Meas), cv: pairsOf(f.Pred, f.Meas), cvGroup: cvGroup})
		}
		ts.used = append(ts.used, where+" by "+held.Label)
		if len(training) > 0 {
			ts.left = append(ts.left, fmt.Sprintf("%s %s (tables the profile was fitted on)", where, strings.Join(training, ", ")))
		}
		if len(repeated) > 0 {
			ts.left = append(ts.left, fmt.Sprintf("%s %s (the same tables as a newer release's, reported there)", where, strings.Join(repeated, ", ")))
		}
		return nil
	}
	switch held, ok, err := aiconfigurator.LeaveReleaseOut(g, e); {
	case err != nil:
		return err
	case !ok:
		res.release.left = append(res.release.left, where+" (the GPU has no profile of another release)")
	default:
		if err := add(&res.release, SourceReleaseTransfer, "the release: the GPU's own profile of the nearest other release", held); err != nil {
			return err
		}
	}
	held, err := aiconfigurator.LeaveGPUOut(g, e)
	if err != nil {
		return err
	}
	return add(&res.gpu, SourceGPUTransfer, "the GPU: the profile it would borrow", held)
}

// tableSHAs are the SHA-256 digests of the files family's rows come from.
func tableSHAs(k *kernels.Tables, family string) []string {
	var out []string
	for _, name := range aiconfigurator.FamilyTableFiles(family) {
		for _, f := range k.Files {
			if path.Base(f.File) == name {
				out = append(out, f.SHA256)
			}
		}
	}
	return out
}

// transferNote fills note's data and the per-(GPU, release) list of the
// held-out profiles and what was left out.
func transferNote(note *SourceNote, ts transferSource) {
	note.Data = []string{aicDir}
	note.CrossValidated += "; per GPU and release, the profile that predicted: " + strings.Join(ts.used, "; ")
	if len(ts.left) > 0 {
		note.CrossValidated += "; not reported: " + strings.Join(ts.left, "; ")
	}
}

// releaseTransferGroups: each GPU's tables at each release predicted by
// the GPU's own profile of the nearest other release
// (aiconfigurator.LeaveReleaseOut).
func releaseTransferGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	return transferSourceGroups(ctx, o, SourceNote{
		Fitted: "the profile roofsim picks for the GPU and release (`--engine vllm@X`): fitted on these tables where the GPU " +
			"has a profile of exactly this release (a per-release file, or a single file's own release), elsewhere itself " +
			"a transfer from another release (the nearest earlier, else the earliest)",
		CrossValidated: "leave one release out: the GPU's own profile of the nearest other release (earlier, else later), " +
			"which never saw these tables; families whose table bytes that profile was fitted on (a reuse copy, the " +
			"GPU's NCCL table under all-reduce) are left out",
	}, func(r *transferResults) transferSource { return r.release })
}

// gpuTransferGroups: each GPU's tables at each release predicted by the
// profile it would borrow if it had none (aiconfigurator.LeaveGPUOut).
func gpuTransferGroups(ctx context.Context, o *Options) (SourceNote, []group, []TermSelection, error) {
	return transferSourceGroups(ctx, o, SourceNote{
		Fitted: "the profile roofsim picks for the GPU and release (as in release_transfer)",
		CrossValidated: "leave one GPU out: the profile the GPU would borrow if it had none of its own (the nearest calibrated " +
			"GPU of its architecture family, its profile for the release or the nearest earlier, applied to this GPU's own peaks " +
			"and bandwidth; all-reduce from its own interconnect's defaults), or the built-in defaults where no other GPU " +
			"of its family is calibrated",
	}, func(r *transferResults) transferSource { return r.gpu })
}

// transferSourceGroups is one transfer source: note completed with part's
// lists, and part's groups.
func transferSourceGroups(ctx context.Context, o *Options, note SourceNote, part func(*transferResults) transferSource) (SourceNote, []group, []TermSelection, error) {
	res, err := transfers(ctx, o)
	if err != nil {
		return note, nil, nil, err
	}
	ts := part(res)
	transferNote(&note, ts)
	return note, ts.groups, nil, nil
}
