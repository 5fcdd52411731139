package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// Grid is the set of configurations a sweep explores: the cross product of
// its lists. Other settings (dtypes, block size, prefix caching, ...) come
// from Options.Base and are shared by every configuration.
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
}

// Size is the number of configurations, the product of the list lengths.
func (g Grid) Size() int {
	return len(g.GPUs) * len(g.TP) * len(g.dp()) * len(g.ep()) * len(g.MaxNumSeqs) * len(g.MaxNumBatchedTokens)
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
}

// Configs lists the grid in index order: row-major over (GPUs, TP, DP, EP,
// MaxNumSeqs, MaxNumBatchedTokens) in the order given, the last list varying
// fastest; with DP and EP {1}, index = ((g*len(TP)+t)*len(MaxNumSeqs)+s)*len(MaxNumBatchedTokens)+b.
func (g Grid) Configs() []Config {
	out := make([]Config, 0, g.Size())
	for _, gpu := range g.GPUs {
		for _, tp := range g.TP {
			for _, dp := range g.dp() {
				for _, ep := range g.ep() {
					for _, s := range g.MaxNumSeqs {
						for _, b := range g.MaxNumBatchedTokens {
							out = append(out, Config{Index: len(out), GPU: gpu, TP: tp, DP: dp, EP: ep, MaxNumSeqs: s, MaxNumBatchedTokens: b})
						}
					}
				}
			}
		}
	}
	return out
}

// GPUsPerInstance is TP x DP.
func (c Config) GPUsPerInstance() int { return c.TP * max(c.DP, 1) }

// GridError is a grid value that cannot be used. Field is the list's name
// (gpus, tp, max_num_seqs, max_num_batched_tokens), so a command line can
// name its flag.
type GridError struct {
	Field  string
	Reason string
}

func (e *GridError) Error() string { return e.Field + ": " + e.Reason }

// resolve validates the grid against m and returns the GPUs by name: every
// list non-empty without duplicates, every GPU known, every TP accepted by
// the model's heads (TP divides num_heads, and divides num_kv_heads or is a
// multiple of it, as vLLM requires), positive engine settings.
func (g Grid) resolve(m *model.Config) (map[string]*hardware.GPU, error) {
	if len(g.GPUs) == 0 {
		return nil, &GridError{"gpus", "empty list"}
	}
	gpus := make(map[string]*hardware.GPU, len(g.GPUs))
	for _, name := range g.GPUs {
		if _, dup := gpus[name]; dup {
			return nil, &GridError{"gpus", fmt.Sprintf("%q listed twice", name)}
		}
		gpu, err := hardware.Resolve(name)
		if err != nil {
			return nil, &GridError{"gpus", err.Error()}
		}
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
