package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/sim"
)

// Grid is the set of configurations a sweep explores: the cross product of
// its lists. Other settings (dtypes, block size, prefix caching, ...) come
// from Options.Base and are shared by every configuration, unless Settings
// sweeps them too.
type Grid struct {
	// GPUs are catalog names or aliases (or GPU YAML paths, as hardware.Resolve).
	GPUs []string
	// TP are tensor-parallel degrees (GPUs per attention rank).
	TP []int
	// DP are attention data-parallel degrees (ranks per instance, each of TP
	// GPUs) and EP expert-parallel degrees (workload.Deployment); an empty
	// list means {1}.
	DP []int `json:",omitempty"`
	EP []int `json:",omitempty"`
	// MaxNumSeqs are vLLM max_num_seqs values.
	MaxNumSeqs []int
	// MaxNumBatchedTokens are vLLM max_num_batched_tokens values (tokens per step).
	MaxNumBatchedTokens []int
	// Settings sweeps any other setting of workload.Deployment by its key
	// (see Grid.Set), each axis varying faster than the lists above and than
	// the axes before it.
	Settings []Axis `json:",omitempty"`
}

// Axis is one swept setting: a workload.Deployment key and its values in
// canonical text form (as workload.ParseValue reads them and Axis.Values
// formats them back: "2", "0.85", "true", "fp8").
type Axis struct {
	Key    string
	Values []string
}

// SettingValue is a configuration's value of one swept setting of Grid.Settings.
type SettingValue struct {
	Key, Value string
}

// Size is the number of configurations, the product of the list lengths.
func (g Grid) Size() int {
	n := 1
	for _, d := range g.dims() {
		n *= d
	}
	return n
}

// dims are the list lengths in index order (Configs).
func (g Grid) dims() []int {
	out := []int{len(g.GPUs), len(g.TP), len(g.dp()), len(g.ep()), len(g.MaxNumSeqs), len(g.MaxNumBatchedTokens)}
	for _, a := range g.Settings {
		out = append(out, len(a.Values))
	}
	return out
}

func orOne(l []int) []int {
	if len(l) == 0 {
		return []int{1}
	}
	return l
}

func (g Grid) dp() []int { return orOne(g.DP) }
func (g Grid) ep() []int { return orOne(g.EP) }

// Config is one point of the grid.
type Config struct {
	// Index is the configuration's stable position (see Grid.Configs).
	Index               int
	GPU                 string
	TP                  int
	DP, EP              int
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	// Settings are the values of Grid.Settings' axes, in their order.
	Settings []SettingValue `json:",omitempty"`
	// unitGPUs, when > 0, is the GPUs of the disaggregated unit the
	// configuration's settings make (disagg.go).
	unitGPUs int
}

// Configs lists the grid in index order: row-major over (GPUs, TP, DP, EP,
// MaxNumSeqs, MaxNumBatchedTokens, then each of Settings) in the order
// given, the last list varying fastest; with DP and EP {1} and no Settings,
// index = ((g*len(TP)+t)*len(MaxNumSeqs)+s)*len(MaxNumBatchedTokens)+b.
// O(Size x number of lists).
func (g Grid) Configs() []Config {
	dims := g.dims()
	n := g.Size()
	out := make([]Config, 0, n)
	digit := make([]int, len(dims))
	for i := range n {
		rem := i
		for k := len(dims) - 1; k >= 0; k-- {
			digit[k], rem = rem%dims[k], rem/dims[k]
		}
		c := Config{Index: i, GPU: g.GPUs[digit[0]], TP: g.TP[digit[1]], DP: g.dp()[digit[2]], EP: g.ep()[digit[3]],
			MaxNumSeqs: g.MaxNumSeqs[digit[4]], MaxNumBatchedTokens: g.MaxNumBatchedTokens[digit[5]]}
		for k, a := range g.Settings {
			c.Settings = append(c.Settings, SettingValue{Key: a.Key, Value: a.Values[digit[6+k]]})
		}
		out = append(out, c)
	}
	return out
}

// GPUsPerInstance is TP x DP, or the GPUs of both pools of a disaggregated
// unit (disagg.go).
func (c Config) GPUsPerInstance() int {
	if c.unitGPUs > 0 {
		return c.unitGPUs
	}
	return c.TP * max(c.DP, 1)
}

// GridError is a grid value that cannot be used. Field is the list's name
// (gpus, tp, dp, ep, max_num_seqs, max_num_batched_tokens) or, for an axis
// of Grid.Settings and for Grid.Set, the setting's key, so a command line
// can name its flag.
type GridError struct {
	Field  string
	Reason string
}

func (e *GridError) Error() string { return e.Field + ": " + e.Reason }

// resolve validates the grid against the base deployment and returns the
// GPUs by name: every list non-empty without duplicates, every GPU known,
// every TP accepted by the model's heads (TP divides num_heads, and divides
// num_kv_heads or is a multiple of it, as vLLM requires; with the model
// swept, configurations whose TP a model refuses are skipped instead),
// positive engine settings, every value of a swept setting valid on its own
// (workload.Deployment.Validate with the base's other settings).
func (g Grid) resolve(base *sim.Deployment) (map[string]*hardware.GPU, error) {
	if len(g.GPUs) == 0 {
		return nil, &GridError{"gpus", "empty list"}
	}
	gpus := make(map[string]*hardware.GPU, len(g.GPUs))
	given := make(map[string]string, len(g.GPUs)) // catalog name -> as listed
	for _, name := range g.GPUs {
		if _, dup := gpus[name]; dup {
			return nil, &GridError{"gpus", fmt.Sprintf("%q listed twice", name)}
		}
		gpu, err := hardware.Resolve(name)
		if err != nil {
			return nil, &GridError{"gpus", err.Error()}
		}
		if first, dup := given[gpu.Name]; dup {
			return nil, &GridError{"gpus", fmt.Sprintf("%q listed twice (%q is the same GPU, %s)", name, first, gpu.Name)}
		}
		given[gpu.Name] = name
		gpus[name] = gpu
	}
	ints := []struct {
		field string
		vals  []int
	}{{"tp", g.TP}, {"dp", g.dp()}, {"ep", g.ep()}, {"max_num_seqs", g.MaxNumSeqs}, {"max_num_batched_tokens", g.MaxNumBatchedTokens}}
	for _, l := range ints {
		if len(l.vals) == 0 {
			return nil, &GridError{l.field, "empty list"}
		}
		seen := map[int]bool{}
		for _, v := range l.vals {
			if v < 1 {
				return nil, &GridError{l.field, fmt.Sprintf("%d: must be >= 1", v)}
			}
			if seen[v] {
				return nil, &GridError{l.field, fmt.Sprintf("%d listed twice", v)}
			}
			seen[v] = true
		}
	}
	if err := g.checkSettings(base.Settings); err != nil {
		return nil, err
	}
	if g.sweeps(keyModel) {
		return gpus, nil
	}
	m := base.Model
	for _, tp := range g.TP {
		if m.NumHeads%tp != 0 {
			return nil, &GridError{"tp", fmt.Sprintf("%d does not divide num_heads %d of %s", tp, m.NumHeads, m.Name)}
		}
		if m.NumKVHeads%tp != 0 && tp%m.NumKVHeads != 0 {
			return nil, &GridError{"tp", fmt.Sprintf("%d does not divide num_kv_heads %d of %s (nor is it a multiple of it)", tp, m.NumKVHeads, m.Name)}
		}
	}
	return gpus, nil
}

// Shard selects the configurations with Index % Count == Index of the shard.
// The zero value (Count 0) means every configuration.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q: want i/n (e.g. 0/4)", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: want i/n with integers (e.g. 0/4)", s)
	}
	// 0/0 is the zero Shard, which Validate takes for "not sharded"; as
	// text it is a count of no shards.
	if n < 1 {
		return Shard{}, fmt.Errorf("%q: shard count must be >= 1, got %d", s, n)
	}
	sh := Shard{Index: i, Count: n}
	return sh, sh.Validate()
}

// Validate checks 0 <= Index < Count (or the zero value).
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 {
		return fmt.Errorf("shard: count must be >= 1, got %d", s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard: index must be in [0, %d), got %d", s.Count, s.Index)
	}
	return nil
}

// Has reports whether the shard runs configuration index i.
func (s Shard) Has(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

// String formats the shard as "i/n" ("" for all).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
