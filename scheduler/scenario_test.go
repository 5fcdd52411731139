package scheduler_test

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/datadriven"
	"github.com/roofsim/roofsim/scheduler"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/*.txt")

// TestScenarios runs the scenario files under testdata/ (internal/datadriven):
// each drives a scheduler through the public API and prints what every step
// schedules, so a behaviour change shows as a reviewed diff of text.
//
// Commands:
//
//	config max_num_seqs= max_num_batched_tokens= block_size= num_gpu_blocks=
//	       max_model_len= prefix_caching= chunked_prefill= policy= long_prefill=
//	    a new scheduler (vLLM defaults, max_model_len 1024, for keys left out)
//	arrive id=a prompt=10 output=3 [prefix=sys:8,doc:4] [priority=0]
//	    queues request a; prefix names content segments shared by name
//	step [n=1]
//	    forms, prints and commits n batches
//	run [max=100]
//	    steps until no work is left (at most max steps)
//	stats
//	    queue and KV occupancy, preemptions, prefix-cache hits
//	requests
//	    each request's progress, in arrival order
func TestScenarios(t *testing.T) {
	datadriven.RunDir(t, "testdata", *update, func() func(*testing.T, *datadriven.Command) string {
		return (&driver{}).handle
	})
}

// driver is one scenario's state.
type driver struct {
	s     *scheduler.Scheduler
	reqs  []*scheduler.Request
	names map[*scheduler.Request]string
	keys  map[string]uint64
	steps int
	done  []*scheduler.Request
}

func (d *driver) handle(t *testing.T, c *datadriven.Command) string {
	if c.Name != "config" && d.s == nil {
		t.Fatalf("%s: %s before config", c.Pos, c.Name)
	}
	switch c.Name {
	case "config":
		return d.config(t, c)
	case "arrive":
		return d.arrive(t, c)
	case "step":
		var b strings.Builder
		for range c.Int(t, "n", 1) {
			d.step(t, &b)
		}
		return b.String()
	case "run":
		var b strings.Builder
		for limit := c.Int(t, "max", 100); d.s.HasWork(); limit-- {
			if limit == 0 {
				b.WriteString("still work left\n")
				break
			}
			d.step(t, &b)
		}
		return b.String()
	case "stats":
		st := d.s.Stats()
		return fmt.Sprintf("waiting %d running %d | kv used %d free %d (cached %d) of %d | preemptions %d | prefix hits %d of %d tokens",
			st.Waiting, st.Running, st.KVBlocksUsed, st.KVBlocksFree, st.KVBlocksCachedFree, st.KVBlocksTotal,
			st.Preemptions, st.PrefixHitTokens, st.PrefixQueryTokens)
	case "requests":
		var b strings.Builder
		for _, r := range d.reqs {
			fmt.Fprintf(&b, "%s: computed %d of prompt %d, output %d of %d, cached %d, preempted %d\n",
				d.names[r], r.NumComputed, r.PromptTokens, r.NumOutput, r.OutputTokens, r.NumCached, r.Preemptions)
		}
		return b.String()
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Name)
	return ""
}

func (d *driver) config(t *testing.T, c *datadriven.Command) string {
	cfg := scheduler.DefaultConfig()
	cfg.MaxModelLen = 1024
	cfg.MaxNumSeqs = c.Int(t, "max_num_seqs", cfg.MaxNumSeqs)
	cfg.MaxNumBatchedTokens = c.Int(t, "max_num_batched_tokens", cfg.MaxNumBatchedTokens)
	cfg.BlockSize = c.Int(t, "block_size", cfg.BlockSize)
	cfg.NumGPUBlocks = c.Int(t, "num_gpu_blocks", cfg.NumGPUBlocks)
	cfg.MaxModelLen = c.Int(t, "max_model_len", cfg.MaxModelLen)
	cfg.EnablePrefixCaching = c.Bool(t, "prefix_caching", cfg.EnablePrefixCaching)
	cfg.EnableChunkedPrefill = c.Bool(t, "chunked_prefill", cfg.EnableChunkedPrefill)
	cfg.Policy = scheduler.Policy(c.Str("policy", string(cfg.Policy)))
	cfg.LongPrefillTokenThreshold = c.Int(t, "long_prefill", cfg.LongPrefillTokenThreshold)
	s, err := scheduler.New(cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	*d = driver{s: s, names: map[*scheduler.Request]string{}, keys: map[string]uint64{}}
	return ""
}

func (d *driver) arrive(t *testing.T, c *datadriven.Command) string {
	name := c.Str("id", "")
	if name == "" {
		t.Fatalf("%s: arrive needs id=", c.Pos)
	}
	r := &scheduler.Request{
		ID: uint64(len(d.reqs) + 1), Seq: uint64(len(d.reqs) + 1),
		PromptTokens: c.Int(t, "prompt", 0), OutputTokens: c.Int(t, "output", 0),
		Priority: c.Int(t, "priority", 0),
	}
	if p := c.Str("prefix", ""); p != "" {
		for _, seg := range strings.Split(p, ",") {
			key, n, ok := strings.Cut(seg, ":")
			tokens, err := strconv.Atoi(n)
			if !ok || err != nil {
				t.Fatalf("%s: prefix %q: want name:tokens", c.Pos, seg)
			}
			if _, seen := d.keys[key]; !seen {
				d.keys[key] = uint64(len(d.keys) + 1000)
			}
			r.Segments = append(r.Segments, scheduler.Segment{Key: d.keys[key], Tokens: tokens})
		}
	}
	if err := d.s.Add(r); err != nil {
		return "error: " + err.Error()
	}
	d.reqs = append(d.reqs, r)
	d.names[r] = name
	return ""
}

// step forms one batch, prints it, commits it and checks the invariants.
func (d *driver) step(t *testing.T, b *strings.Builder) {
	batch := d.s.Schedule()
	if batch == nil {
		b.WriteString("idle\n")
		return
	}
	d.steps++
	var items []string
	for _, it := range batch.Items {
		s := fmt.Sprintf("%s decode (ctx %d)", d.names[it.Req], it.Context)
		if it.Prefill {
			s = fmt.Sprintf("%s prefill %d (ctx %d)", d.names[it.Req], it.Tokens, it.Context)
			if it.Sampled {
				s += " sampled"
			}
		}
		items = append(items, s)
	}
	fmt.Fprintf(b, "step %d: %s | %d tokens\n", d.steps, strings.Join(items, ", "), batch.NumTokens)
	for _, r := range batch.Preempted {
		fmt.Fprintf(b, "  preempted %s\n", d.names[r])
	}
	d.done = d.s.Commit(batch, d.done[:0])
	for _, r := range d.done {
		fmt.Fprintf(b, "  finished %s\n", d.names[r])
	}
	st := d.s.Stats()
	fmt.Fprintf(b, "  kv used %d free %d (cached %d) | waiting %d running %d\n",
		st.KVBlocksUsed, st.KVBlocksFree, st.KVBlocksCachedFree, st.Waiting, st.Running)
	if err := d.s.CheckInvariants(); err != nil {
		t.Fatalf("after step %d: %v", d.steps, err)
	}
}
