package sim_test

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/datadriven"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/*.txt")

// TestScenarios runs the engine scenario files under testdata/
// (internal/datadriven): a scripted list of arrivals through sim.Run on a
// real step model, printing every step's time and its split and every
// request's record. The GPU is a frozen file under testdata/gpus, so a
// refit of the shipped profiles does not rewrite the outputs.
//
// Commands:
//
//	deploy model= gpu=gpus/h100.yaml tp=1 max_num_seqs= max_num_batched_tokens=
//	       block_size= num_gpu_blocks= prefix_caching= frontend_us=0
//	    the deployment (vLLM scheduler defaults, max_model_len 32768); clears arrivals
//	arrive id=a at=0ms prompt=100 output=5 [prefix=sys:64]
//	    adds a request to the script (shared prefixes by name)
//	run [until=50ms]
//	    simulates the script from time 0 (to the horizon when given); prints
//	    steps, then requests in arrival order, then the counts
func TestScenarios(t *testing.T) {
	datadriven.RunDir(t, "testdata", *update, func() func(*testing.T, *datadriven.Command) string {
		return (&engineDriver{}).handle
	})
}

// engineDriver is one scenario's state: a deployment and a script.
type engineDriver struct {
	cfg    sim.Config
	script []workload.Request
	names  map[uint64]string
	keys   map[string]uint64
}

func (d *engineDriver) handle(t *testing.T, c *datadriven.Command) string {
	if c.Name != "deploy" && d.cfg.StepModel == nil {
		t.Fatalf("%s: %s before deploy", c.Pos, c.Name)
	}
	switch c.Name {
	case "deploy":
		return d.deploy(t, c)
	case "arrive":
		d.arrive(t, c)
		return ""
	case "run":
		return d.run(t, c)
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Name)
	return ""
}

func (d *engineDriver) deploy(t *testing.T, c *datadriven.Command) string {
	m, err := model.Resolve(c.Str("model", "llama-3.1-8b"))
	if err != nil {
		return "error: " + err.Error()
	}
	g, err := hardware.Resolve(filepath.Join("testdata", c.Str("gpu", "gpus/h100.yaml")))
	if err != nil {
		return "error: " + err.Error()
	}
	step, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: c.Int(t, "tp", 1)})
	if err != nil {
		return "error: " + err.Error()
	}
	sc := scheduler.DefaultConfig()
	sc.MaxModelLen = 32768
	sc.MaxNumSeqs = c.Int(t, "max_num_seqs", sc.MaxNumSeqs)
	sc.MaxNumBatchedTokens = c.Int(t, "max_num_batched_tokens", sc.MaxNumBatchedTokens)
	sc.BlockSize = c.Int(t, "block_size", sc.BlockSize)
	sc.NumGPUBlocks = c.Int(t, "num_gpu_blocks", 4096)
	sc.EnablePrefixCaching = c.Bool(t, "prefix_caching", sc.EnablePrefixCaching)
	*d = engineDriver{
		cfg: sim.Config{Scheduler: sc, StepModel: step, Replicas: 1, Clients: []string{"script"}, StepTrace: true,
			CheckInvariants: true, FrontendDelay: sim.Time(c.Int(t, "frontend_us", 0)) * 1000},
		names: map[uint64]string{}, keys: map[string]uint64{},
	}
	if err := d.cfg.Validate(); err != nil {
		return "error: " + err.Error()
	}
	return ""
}

func (d *engineDriver) arrive(t *testing.T, c *datadriven.Command) {
	name := c.Str("id", "")
	at, err := time.ParseDuration(c.Str("at", "0s"))
	if name == "" || err != nil {
		t.Fatalf("%s: arrive needs id= and a duration at= (%v)", c.Pos, err)
	}
	r := workload.Request{ID: uint64(len(d.script) + 1), ArrivalNS: at.Nanoseconds(),
		PromptTokens: c.Int(t, "prompt", 0), OutputTokens: c.Int(t, "output", 0)}
	if p := c.Str("prefix", ""); p != "" {
		key, n, _ := strings.Cut(p, ":")
		tokens, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("%s: prefix %q: want name:tokens", c.Pos, p)
		}
		if _, ok := d.keys[key]; !ok {
			d.keys[key] = uint64(len(d.keys) + 1000)
		}
		r.Segments = []workload.Segment{{Key: d.keys[key], Tokens: tokens}}
	}
	d.script = append(d.script, r)
	d.names[r.ID] = name
}

func (d *engineDriver) run(t *testing.T, c *datadriven.Command) string {
	cfg := d.cfg
	if u := c.Str("until", ""); u != "" {
		h, err := time.ParseDuration(u)
		if err != nil {
			t.Fatalf("%s: until=%q: %v", c.Pos, u, err)
		}
		cfg.Horizon = sim.Time(h.Nanoseconds())
	}
	src := &script{reqs: slices.Clone(d.script)}
	slices.SortStableFunc(src.reqs, func(a, b workload.Request) int { return int(a.ArrivalNS - b.ArrivalNS) })
	rec := &recorder{}
	res, err := sim.Run(cfg, src, rec)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for i, s := range rec.steps {
		fmt.Fprintf(&b, "step %d at %.3f ms, %.3f ms: prefill %d tokens, %d decodes | compute %.3f memory %.3f comm %.3f overhead %.3f ms | kv %d of %d",
			i+1, s.TimeS*1e3, s.DurationS*1e3, s.PrefillTokens, s.DecodeRequests,
			s.ComputeS*1e3, s.MemoryS*1e3, s.CommS*1e3, s.OverheadS*1e3, s.KVBlocksUsed, s.KVBlocksTotal)
		if s.Preempted > 0 {
			fmt.Fprintf(&b, " | preempted %d", s.Preempted)
		}
		b.WriteString("\n")
	}
	slices.SortFunc(rec.reqs, func(a, b traces.RequestRecord) int { return int(a.ID) - int(b.ID) })
	for _, r := range rec.reqs {
		fmt.Fprintf(&b, "%s: %s, arrived %.3f, first token %.3f, done %.3f ms | ttft %.3f tpot %s queue %.3f ms | prompt %d cached %d output %d | preempted %d\n",
			d.names[r.ID], r.Status, r.ArrivalS*1e3, r.FirstTokenS*1e3, r.FinishS*1e3, r.TTFTms, ms(r.TPOTms), r.QueueMs,
			r.PromptTokens, r.CachedTokens, r.OutputTokens, r.Preemptions)
	}
	fmt.Fprintf(&b, "arrived %d completed %d rejected %d in flight %d | steps %d preemptions %d | end %.3f ms",
		res.Arrived, res.Completed, res.Rejected, res.InFlight, res.Steps, res.Preemptions, res.End.Seconds()*1e3)
	return b.String()
}

// ms formats milliseconds, or "-" for NaN (undefined TPOT).
func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// script is a sim.Source of a fixed list of requests, sorted by arrival.
type script struct{ reqs []workload.Request }

func (s *script) NextArrival() (workload.Request, bool) {
	if len(s.reqs) == 0 {
		return workload.Request{}, false
	}
	r := s.reqs[0]
	s.reqs = s.reqs[1:]
	return r, true
}

func (s *script) OnComplete(workload.Request, int64) (workload.Request, bool) {
	return workload.Request{}, false
}

// recorder keeps every record (a scenario is small).
type recorder struct {
	steps []traces.StepRecord
	reqs  []traces.RequestRecord
}

func (r *recorder) Request(rec *traces.RequestRecord) error {
	r.reqs = append(r.reqs, *rec)
	return nil
}

func (r *recorder) Step(rec *traces.StepRecord) error {
	r.steps = append(r.steps, *rec)
	return nil
}
