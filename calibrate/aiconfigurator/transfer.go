package aiconfigurator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/safefile"
)

// Transfer: a GPU's kernel tables at one engine release predicted by a
// kernel profile fitted on other tables (another release of the same GPU,
// or another GPU's borrowed), with the families whose tables the profile
// was fitted on marked. No refit: prediction only.

// TransferFamily is one operator family of the tables predicted by a
// profile.
type TransferFamily struct {
	kernels.FamilyPredictions
	// Training is true when a table the family's rows come from has the
	// same bytes (SHA-256) as a table the profile was fitted on: the
	// release's own file, a reuse.yaml donor's or a byte-identical copy.
	// Its errors are then fitted errors, not transfer errors.
	Training bool
}

// TransferStats summarises one family's errors: the count, median and
// p90 absolute percentage error, and the bias, the mean signed percentage
// error 100 (pred - meas) / meas (positive: predicted slower).
type TransferStats struct {
	calibrate.APEStats
	BiasPct float64 `json:"bias_pct"`
}

// Stats summarises f's predictions.
func (f TransferFamily) Stats() TransferStats {
	apes := make([]float64, len(f.Pred))
	sum := 0.0
	for i := range f.Pred {
		apes[i] = calibrate.APE(f.Pred[i], f.Meas[i])
		sum += (f.Pred[i] - f.Meas[i]) / f.Meas[i] * 100
	}
	s := TransferStats{APEStats: calibrate.SummarizeAPE(apes)}
	if len(f.Pred) > 0 {
		s.BiasPct = sum / float64(len(f.Pred))
	}
	return s
}

// familyTables are the tables an operator family's rows come from
// (kernels' family names; all-reduce takes both collective tables).
func familyTables(family string) []aic.Table {
	switch {
	case strings.HasPrefix(family, kernels.FamilyGEMMPrefix):
		return []aic.Table{aic.TableGEMM}
	case family == kernels.FamilyAttentionDecode:
		return []aic.Table{aic.TableGenerationAttention}
	case strings.HasPrefix(family, kernels.FamilyAttentionPrefill):
		return []aic.Table{aic.TableContextAttention}
	case strings.HasPrefix(family, kernels.FamilyMoEPrefix):
		return []aic.Table{aic.TableMoE}
	case strings.HasPrefix(family, kernels.FamilyAllReducePrefix):
		return []aic.Table{aic.TableCustomAllReduce, ncclTable}
	}
	return nil
}

// FamilyTableFiles are the file names of the tables an operator family's
// rows come from ("gemm_perf.parquet", ...).
func FamilyTableFiles(family string) []string {
	var out []string
	for _, t := range familyTables(family) {
		out = append(out, t.File())
	}
	return out
}

// ncclTable names the NCCL table (read from comm/nccl/<version>/, not
// from a release directory; aic.DB.NCCL).
const ncclTable aic.Table = "comm/nccl_perf"

// PredictWith predicts every row of pr (a GPU's tables, prepared once for
// several profiles) with profile p on the GPU's own peaks and bandwidth,
// per family as kernels.Predictions does, and marks the families whose
// tables are among fitted (SHA-256 hex digests, FittedTables). The tables'
// files are matched to tables by file name.
func PredictWith(pr *kernels.Prepared, p *hardware.Profile, fitted map[string]bool) ([]TransferFamily, error) {
	if pr == nil || p == nil {
		return nil, fmt.Errorf("transfer: prepared tables and a profile are required")
	}
	preds := pr.Predict(p)
	shaOf := map[string]string{}
	for _, f := range pr.Tables.Files {
		shaOf[path.Base(f.File)] = f.SHA256
	}
	out := make([]TransferFamily, len(preds))
	for i, fp := range preds {
		out[i] = TransferFamily{FamilyPredictions: fp}
		for _, name := range FamilyTableFiles(fp.Family) {
			if s := shaOf[name]; s != "" && fitted[s] {
				out[i].Training = true
			}
		}
	}
	return out, nil
}

// FittedTables is the set of table bytes (SHA-256 hex digests) profile p
// was fitted on: every data file its provenance records, and the tables
// that the release its label names (engine.FromProfile) resolves to on
// owner's system (an --aic fit reads those; a fit of the CSV conversions
// in shared/data/kernels read the same rows). owner is the GPU the profile
// was fitted for (its donor, for a borrowed one). A profile without a vLLM
// release label, or an owner without a system in db, contributes its
// provenance only.
func FittedTables(db *aic.DB, owner *hardware.GPU, p *hardware.Profile) (map[string]bool, error) {
	out := map[string]bool{}
	for _, st := range p.Provenance {
		for _, d := range st.Data {
			if d.SHA256 != "" {
				out[d.SHA256] = true
			}
		}
	}
	e, ok := engine.FromProfile(p.Engine)
	if !ok || e.Name != engine.VLLM || owner == nil {
		return out, nil
	}
	system, err := SystemOf(db, owner)
	if err != nil {
		return out, nil
	}
	var paths []string
	for _, t := range []aic.Table{aic.TableGEMM, aic.TableContextAttention, aic.TableGenerationAttention, aic.TableCustomAllReduce, aic.TableMoE} {
		ref, err := db.Resolve(system, t, aic.Release(e.Version))
		if err != nil {
			continue // a table the release lacks was not fitted on
		}
		paths = append(paths, ref.Path)
	}
	if nccl, _, _, err := db.NCCL(system); err == nil {
		paths = append(paths, nccl)
	}
	// A stage fitted on another system's CSV conversions (shared/data/
	// kernels/<system>/<table>.csv, e.g. a fused_moe fit carried from a
	// donor GPU) was fitted on that system's table of the same release.
	for _, st := range p.Provenance {
		for _, d := range st.Data {
			parts := strings.Split(d.Path, "/")
			if len(parts) != 3 || parts[0] != "kernels" {
				continue
			}
			t, ok := csvTable(parts[2])
			if !ok {
				continue
			}
			if ref, err := db.Resolve(parts[1], t, aic.Release(e.Version)); err == nil {
				paths = append(paths, ref.Path)
			}
		}
	}
	for _, p := range paths {
		data, err := safefile.ReadFile(p, safefile.Table)
		if err != nil {
			return nil, fmt.Errorf("transfer: %w", err)
		}
		sum := sha256.Sum256(data)
		out[hex.EncodeToString(sum[:])] = true
	}
	return out, nil
}

// csvTable is the table a CSV conversion in shared/data/kernels/<system>/
// holds, by file name (the NCCL table is per system, not per release, and
// is counted with the owner's).
func csvTable(name string) (aic.Table, bool) {
	switch name {
	case FileGEMM:
		return aic.TableGEMM, true
	case FileContextAttention:
		return aic.TableContextAttention, true
	case FileGenerationAttention:
		return aic.TableGenerationAttention, true
	case FileCustomAllReduce:
		return aic.TableCustomAllReduce, true
	case FileMoE:
		return aic.TableMoE, true
	}
	return "", false
}

// ProfileChoice is a kernel profile picked for a GPU and engine release,
// and the GPU it was fitted for.
type ProfileChoice struct {
	Profile *hardware.Profile
	// Owner is the GPU the profile was fitted for: the GPU itself, or the
	// donor of a borrowed profile; nil for the built-in defaults.
	Owner *hardware.GPU
	// Label names the profile: "<owner> <engine label>", "borrowed:<gpu>
	// ...", or "defaults".
	Label string
	// Note is the engine's one-line note on the choice ("" when exact).
	Note string
}

// Pick is the profile roofsim prices g with under e (engine.GPUProfile).
func Pick(g *hardware.GPU, e engine.Engine) (ProfileChoice, error) {
	pg, note := e.GPUProfile(g)
	p := pg.EffectiveProfile()
	ch := ProfileChoice{Profile: p, Note: note}
	switch {
	case !p.Calibrated:
		ch.Label = "defaults"
		return ch, nil
	case p.BorrowedFrom != "":
		d, err := hardware.Lookup(p.BorrowedFrom)
		if err != nil {
			return ch, err
		}
		ch.Owner, ch.Label = d, fmt.Sprintf("borrowed:%s %s", d.Name, p.Engine)
	default:
		ch.Owner, ch.Label = g, fmt.Sprintf("%s %s", g.Name, p.Engine)
	}
	return ch, nil
}

// LeaveReleaseOut is the profile g would take under e if it had no
// profile of its own fitted for e's release: its own profile of the
// nearest other release (the nearest earlier, else the earliest later).
// ok is false when g has no own profile of another release (it would
// borrow, which is LeaveGPUOut's question).
func LeaveReleaseOut(g *hardware.GPU, e engine.Engine) (ProfileChoice, bool, error) {
	c := g.Clone()
	kept := c.Releases[:0:0]
	for _, r := range c.Releases {
		if !(r.Engine == string(e.Name) && r.Release == [3]int(e.Version)) {
			kept = append(kept, r)
		}
	}
	c.Releases = kept
	if c.Profile != nil && c.Profile.BorrowedFrom == "" {
		if pe, ok := engine.FromProfile(c.Profile.Engine); ok && pe == e {
			c.Profile = nil
		}
	}
	ch, err := Pick(c, e)
	if err != nil || ch.Owner == nil || ch.Owner.Name != g.Name {
		return ProfileChoice{}, false, err
	}
	// Pick labels with the clone; the owner is g.
	ch.Owner = g
	return ch, true, nil
}

// LeaveGPUOut is the profile g would take under e if it had no kernel
// profile of its own at all: the borrow rule (hardware.Donor) applied with
// g excluded, or the built-in defaults when no other GPU of its
// architecture family is calibrated.
func LeaveGPUOut(g *hardware.GPU, e engine.Engine) (ProfileChoice, error) {
	c := g.Clone()
	c.Profile, c.Releases = nil, nil
	return Pick(c, e)
}

// EnginePolicy is the kernel choice of engine release e on g's
// architecture, from e's engine profile (the nearest release's;
// engine/profiles): its kernel paths that name the kernel tables'
// kernel_source, matched at e's release. nil when e has no engine profile.
func EnginePolicy(e engine.Engine, g *hardware.GPU) SourcePolicy {
	prof, _, err := e.Profile()
	if err != nil {
		return nil
	}
	return func(op hardware.KernelOp, dtype string) (string, string, bool) {
		kp, ok := prof.Match(hardware.KernelQuery{Op: op, Arch: g.Arch, DType: dtype, Release: e.Version})
		if !ok || kp.KernelSource == "" {
			return "", "", false
		}
		return kp.KernelSource, kp.Source, true
	}
}
