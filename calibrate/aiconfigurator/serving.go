package aiconfigurator

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
	"github.com/roofsim/roofsim/model"
)

// ReadServing reads an end-to-end closed-loop serving table such as
// e2e/closed_loop_vllm.csv (columns model_path, system, isl, osl,
// batch_size = concurrency, tp_size, silicon_ttft_ms, silicon_tpot_ms;
// optional id, the weight precision as gemm_quant_mode or precision, the
// engine and its release as backend and backend_version, and the MoE
// layout as moe_tp_size, moe_ep_size and attention_dp_size: see
// serving.Row.ResolveLayout).
func ReadServing(path string) ([]serving.Row, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseServing(f, path)
}

// ParseServing is ReadServing over a reader; name labels errors.
func ParseServing(r io.Reader, name string) ([]serving.Row, error) {
	o := table.Options{Ragged: true,
		Required: []string{"model_path", "system", "isl", "osl", "batch_size", "tp_size", "silicon_ttft_ms", "silicon_tpot_ms"}}
	return table.ReadAll(r, name, o, func(t *table.Reader) serving.Row {
		row := serving.Row{ID: t.Str("id"), Line: t.Line(), Model: t.Str("model_path"), GPU: t.Str("system"),
			Precision: t.Str("gemm_quant_mode"),
			ISL:       t.IntMin("isl", 1), OSL: t.IntMin("osl", 1), Concurrency: t.IntMin("batch_size", 1), TP: t.IntMin("tp_size", 1),
			TTFTms: t.Positive("silicon_ttft_ms"), TPOTms: t.Positive("silicon_tpot_ms")}
		if row.Precision == "" {
			row.Precision = t.Str("precision")
		}
		row.Engine, row.Version = t.Str("backend"), t.Str("backend_version")
		row.Harness = Harness(t.Str("silicon_data_source"), row.GPU, row.Engine, row.Version)
		if row.Version != "" {
			if _, err := engine.ResolveRelease(engine.VLLM, row.Version); err != nil {
				t.Failf("backend_version", "%v", err)
			}
		}
		row.MoETP, row.EP, row.DP = optInt(t, "moe_tp_size"), optInt(t, "moe_ep_size"), optInt(t, "attention_dp_size")
		if t.Err() == nil {
			if err := row.ResolveLayout(); err != nil {
				t.Failf("moe_ep_size", "%v", err)
			}
		}
		return row
	})
}

// SiliconDB is the harness of the rows AIConfigurator's silicon database
// holds (Harness).
const SiliconDB = "aiconfigurator-silicon-db"

// Harness names the benchmark harness behind a row from its
// silicon_data_source column, a list of "key=value" fields separated by
// "; " whose first names where the row came from:
//   - "db-dump/<date>": a dump of AIConfigurator's silicon database;
//   - "source_file=<name>.csv", a bare file name: a dated export of that
//     database (its rows carry the database's measured= dates);
//   - "source_file=<dir>/<name>.csv": a file of another harness, which
//     writes one file per model under one directory, laid out by system,
//     backend and release (".../h200_sxm/vllm/0.12.0/<model>.csv"): the
//     harness is the directory above the row's own system, backend and
//     backend_version components ("files:<dir>").
//
// Anything else is its own harness, named by the first field as written;
// an empty column is "" (no harness named).
func Harness(source, system, backend, version string) string {
	first, _, _ := strings.Cut(source, ";")
	first = strings.TrimSpace(first)
	switch {
	case first == "":
		return ""
	case strings.HasPrefix(first, "db-dump/"):
		return SiliconDB
	}
	file, ok := strings.CutPrefix(first, "source_file=")
	if !ok {
		return first
	}
	dir := path.Dir(file)
	if dir == "." {
		return SiliconDB
	}
	for dir != "." && dir != "/" {
		base := path.Base(dir)
		if !strings.EqualFold(base, system) && !strings.EqualFold(base, backend) && !strings.EqualFold(base, version) {
			break
		}
		dir = path.Dir(dir)
	}
	return "files:" + dir
}

// optInt is an optional integer column >= 0: 0 when absent or empty.
// AIConfigurator writes 0 for a degree that is not set (moe_tp_size and
// moe_ep_size on dense rows), which reads as absent.
func optInt(t *table.Reader, col string) int {
	if t.Str(col) == "" {
		return 0
	}
	return t.IntMin(col, 0)
}

// Models resolves a serving table's model_path column: a path to a Hugging
// Face config.json or to the directory holding one is loaded, relative to
// the directory of the table (file) when it is not absolute; anything else
// goes to model.Resolve (a path from the working directory, or a catalog
// name such as "meta-llama/Llama-3.1-70B").
func Models(file string) func(string) (*model.Config, error) {
	dir := filepath.Dir(file)
	return func(name string) (*model.Config, error) {
		if name != "" && !filepath.IsAbs(name) {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				return model.Resolve(p)
			}
		}
		return model.Resolve(name)
	}
}
