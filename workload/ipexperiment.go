package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/yamlstrict"
	"github.com/roofsim/roofsim/model"
	"go.yaml.in/yaml/v3"
)

// An inference-perf run directory, as the open-loop experiments keep it:
//
//	profile.yaml            the config given to inference-perf
//	exp-config.yaml         the vLLM server's launch settings (the harness's file)
//	results/config.yaml     the config as the inference-perf that ran expanded it
//	results/*_lifecycle_metrics.json  its reports (read by sim compare)
//
// inference-perf writes results/config.yaml from its parsed configuration
// (reportgen/base.py, generate_config_report: config.model_dump), so it lists
// every field that release knew, defaults filled in, and none it did not: its
// pydantic models ignore unknown keys. A profile written for a newer release
// can therefore name features (enable_multi_turn_chat,
// num_unique_system_prompts) that the release that ran never saw; what was
// sent is what results/config.yaml says.
const (
	ipExpandedName  = "config.yaml"
	ipResultsDir    = "results"
	ipExpConfigName = "exp-config.yaml"
)

// ipExpanded returns the expanded config written beside an inference-perf
// config at filename (results/config.yaml in its directory), or nil when there
// is none or filename is that file itself.
func ipExpanded(filename string) (path string, data []byte, err error) {
	path = filepath.Join(filepath.Dir(filename), ipResultsDir, ipExpandedName)
	if filepath.Clean(filename) == filepath.Clean(path) {
		return "", nil, nil
	}
	data, err = safefile.ReadFile(path, safefile.Workload)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if !IsInferencePerf(data) {
		return "", nil, fmt.Errorf("%s: not an inference-perf config (no load or data section)", path)
	}
	return path, data, nil
}

// ipApplyExpanded replaces c's traffic sections (data, load) by those of the
// expanded config beside filename, when there is one, and notes the keys of
// the given config that the release that ran ignored.
func ipApplyExpanded(c *ipConfig, data []byte, filename string, note func(string, ...any)) error {
	path, exp, err := ipExpanded(filename)
	if err != nil || exp == nil {
		return err
	}
	var e ipConfig
	if _, err := yamlstrict.Decode(exp, &e); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	c.Data, c.Load = e.Data, e.Load
	var given, ran map[string]any
	if err := yaml.Unmarshal(data, &given); err != nil {
		return err
	}
	if err := yaml.Unmarshal(exp, &ran); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var dropped []string
	for _, sec := range []string{"data", "load"} {
		dropped = append(dropped, missingKeys(given[sec], ran[sec], sec)...)
	}
	slices.Sort(dropped)
	rel := filepath.Join(ipResultsDir, ipExpandedName)
	if len(dropped) > 0 {
		note("%s (the config as the inference-perf that ran parsed it) lacks %s: that release ignored them, so roofsim simulates the traffic of %s", rel, strings.Join(dropped, ", "), rel)
	} else {
		note("data and load are read from %s, the config as the inference-perf that ran parsed it", rel)
	}
	return nil
}

// missingKeys lists the key paths under prefix that are in given but not in
// ran (nested mappings are compared key by key).
func missingKeys(given, ran any, prefix string) []string {
	g, ok := given.(map[string]any)
	if !ok {
		return nil
	}
	r, _ := ran.(map[string]any)
	var out []string
	for k, v := range g {
		rv, ok := r[k]
		if !ok {
			out = append(out, prefix+"."+k)
			continue
		}
		out = append(out, missingKeys(v, rv, prefix+"."+k)...)
	}
	return out
}

// ipExpConfig is the harness's record of the vLLM server's launch settings
// (exp-config.yaml beside profile.yaml).
type ipExpConfig struct {
	Model               string `yaml:"model"`
	TensorParallelism   int    `yaml:"tensor_parallelism"`
	MaxModelLen         int    `yaml:"max_model_len"`
	MaxNumBatchedTokens int    `yaml:"max_num_batched_tokens"`
	MaxNumSeqs          int    `yaml:"max_num_seqs"`
	App                 string `yaml:"app"`
}

// ipApplyServer sets the deployment from the server the config drove: the
// vLLM launch settings of exp-config.yaml beside filename when present, and
// the served model (exp-config.yaml's model, else server.model_name). A served
// name is resolved like --model (catalog name or alias, or a path to a config.json);
// one that resolves to nothing is kept, so that the run fails naming it unless
// --model replaces it.
func ipApplyServer(s *Spec, c *ipConfig, filename string, note func(string, ...any)) error {
	served, from := "", ""
	if m, ok := c.Server["model_name"].(string); ok && m != "" {
		served, from = m, "server.model_name"
	}
	path := ipExpConfigPath(filename)
	data, err := safefile.ReadFile(path, safefile.Workload)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		var e ipExpConfig
		if _, err := yamlstrict.Decode(data, &e); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, f := range []struct {
			name string
			v    int
			dst  *int
		}{{"tensor_parallelism", e.TensorParallelism, &s.TP}, {"max_model_len", e.MaxModelLen, &s.Serving.MaxModelLen},
			{"max_num_batched_tokens", e.MaxNumBatchedTokens, &s.Serving.MaxNumBatchedTokens}, {"max_num_seqs", e.MaxNumSeqs, &s.Serving.MaxNumSeqs}} {
			if f.v < 0 {
				return fmt.Errorf("%s: %s: must be >= 0, got %d", path, f.name, f.v)
			}
			if f.v > 0 {
				*f.dst = f.v
			}
		}
		note("%s: the server's vLLM launch settings: tp %d, max_model_len %d, max_num_batched_tokens %d, max_num_seqs %d", ipExpConfigName, s.TP, s.Serving.MaxModelLen, s.Serving.MaxNumBatchedTokens, s.Serving.MaxNumSeqs)
		if e.Model != "" {
			served, from = e.Model, ipExpConfigName+" model"
		}
	}
	if served == "" {
		note("the config names no served model; the simulated model comes from --model or the defaults")
		return nil
	}
	if cfg, err := model.Lookup(served); err == nil {
		s.Model = cfg.Name
		note("%s %q is simulated as catalog model %s", from, served, cfg.Name)
		return nil
	}
	s.Model = served
	if _, err := model.Resolve(served); err != nil {
		note("%s %q is neither a catalog model nor a config.json path; give --model", from, served)
	}
	return nil
}

// ipExpConfigPath is where the launch settings of the server that filename's
// run drove are: exp-config.yaml beside it, or beside the run directory when
// filename is the run's results/config.yaml.
func ipExpConfigPath(filename string) string {
	dir := filepath.Dir(filename)
	if filepath.Base(dir) == ipResultsDir && filepath.Base(filename) == ipExpandedName {
		if p := filepath.Join(filepath.Dir(dir), ipExpConfigName); fileExists(p) {
			return p
		}
	}
	return filepath.Join(dir, ipExpConfigName)
}

// fileExists reports whether path names an existing file or directory.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
