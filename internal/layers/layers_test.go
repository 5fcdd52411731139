package layers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/roofsim/roofsim/"

// layers gives the layer of every package of the module, by its path below
// the module. A package may import only packages of a strictly lower
// layer. A new package gets a row here: where it sits is a design decision.
func layers() map[string]int {
	return map[string]int{
		// Leaves: no module imports but internal ones. The ranges every input
		// is checked against and the opening of input files sit below the
		// leaves that parse files (table, yamlstrict), which clip what they
		// quote with safefile.
		"internal/limits": -2, "internal/safefile": -1,
		"internal/heapq": 0, "internal/mix": 0, "internal/registry": 0,
		"internal/table": 0, "internal/yamlstrict": 0, "internal/progress": 0,
		"internal/datadriven": 0, "internal/shareddata": 0, "internal/layers": 0,
		"plot": 0, "observe/mock": 0, "examples": 0,
		// The AIConfigurator database layout (Parquet tables, reuse.yaml).
		"calibrate/aic": 0,
		// The engine profiles' files (embedded data, parsed by hardware).
		"engine/profiles": 0,
		// The engines' tuned fused-MoE tile lists (embedded data, parsed by hardware).
		"engine/moeconfigs": 0,
		// The rebuild plan of the shipped profiles (its YAML, order, diff).
		"calibrate/plan": 1,
		// Catalogs, records and batch formation.
		"hardware": 1, "scheduler": 1, "routing": 1,
		"model": 2, "traces": 2,
		// Physics: what one forward pass costs.
		"roofline": 3,
		// What an engine release does (kernel paths keyed on the GPU's arch).
		"engine": 4,
		// The deployment settings, typed by the vocabularies below them.
		"settings": 5,
		// Workload generation, over the settings.
		"workload": 6,
		// The discrete-event engine; observe is its mirror image on a real
		// server, beside it, never on top of it.
		"sim": 7, "observe": 7,
		// The run pipeline and what compares runs.
		"pipeline": 8, "compare": 8,
		// Capacity search and calibration, on top of the pipeline.
		"sweep": 9, "calibrate": 9,
		"calibrate/internal/fit": 10,
		"calibrate/kernels":      11, "calibrate/throughput": 11, "calibrate/steps": 11,
		"calibrate/llamacpp": 12, "calibrate/vidur": 12, "calibrate/serving": 12, "calibrate/observed": 12, "calibrate/openloop": 12,
		"calibrate/aiconfigurator": 13,
		// The all-reduce rank spread, fitted by simulating serving rows.
		"calibrate/arsync": 13,
		// The accuracy report runs every validator above.
		"calibrate/report": 14,
		// Adapters.
		"serve":   14,
		"cmd/sim": 15,
	}
}

// TestImportLayers parses the imports of every non-test Go file of the
// module and checks each against the table: no import of a package of the
// same or a higher layer, no package missing from the table, cobra and
// viper only in cmd/sim.
func TestImportLayers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	layer := layers()
	// Outside packages only the command-line adapter may import (STYLE.md:
	// viper stays at the edge).
	adapterOnly := []string{"github.com/spf13/cobra", "github.com/spf13/viper"}
	imports := map[string][]string{} // package -> module imports
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			for _, a := range adapterOnly {
				if (p == a || strings.HasPrefix(p, a+"/")) && pkg != "cmd/sim" {
					t.Errorf("%s imports %s: only cmd/sim may", path, p)
				}
			}
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[pkg], dep) {
				imports[pkg] = append(imports[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("found only %d packages under %s", len(imports), root)
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lp, ok := layer[p]
		if !ok {
			t.Errorf("package %s has no layer: add it to the table", p)
			continue
		}
		for _, dep := range imports[p] {
			ld, ok := layer[dep]
			if ok && ld >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports go down the layers only", p, lp, dep, ld)
			}
		}
	}
	for p := range layer {
		if _, ok := imports[p]; !ok {
			t.Errorf("table names %s, which has no Go files", p)
		}
	}
}
