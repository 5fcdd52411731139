package sim_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
)

// Physical sanity over the whole catalog: every catalog model on every
// catalog GPU at TP 1, 2, 4 and 8 (where the deployment fits in memory and
// TP divides the heads), at several batch sizes and context lengths, with
// the default settings (so each GPU's shipped profile and engine policy).
//
//   - A decode step reads at least the weights it uses and the KV cache it
//     attends to, and computes at least their FLOPs, so it takes at least
//     its roofline floor, max(bytes / peak bandwidth, FLOPs / fastest peak)
//     (decodeFloor). For decode the bytes dominate, except for small
//     models at batch 256, where the FLOPs do.
//   - It takes at most decodeSlack x that floor plus the step's stated
//     fixed costs (decodeAllowance): the model's kernel launch times, the
//     engine's per-step and per-request costs, its host work and the
//     tensor-parallel collectives (interconnect time the floor does not
//     count). Everything else (kernels below their roofline, the engine's
//     per-(request, KV head, layer) term) must fit in the slack.
//   - A prefill step computes at least the GEMM and causal-attention FLOPs
//     of its tokens, so it takes at least FLOPs / fastest peak
//     (prefillFloor).
//
// A violation is attributed to a cause (attribute): the engine's
// per-(request, KV head, layer) term when the step is within the bound
// without it, else the operator furthest over its own roofline. A cause on
// a GPU listed in knownDecodeOver (knownDecodeUnder) with a bound the
// case does not pass is tolerated; anything else fails, listing the worst
// cases. An entry fails as well when its cause gets worse than recorded or
// no longer occurs.

// decodeSlack is the factor over the byte floor a decode step may take
// besides its fixed costs.
const decodeSlack = 1.6

// sanityBatches and sanityContexts are the decode batch sizes (requests)
// and KV lengths (tokens per request) checked; sanityPrefills the prefill
// chunk lengths (tokens, one request, nothing cached).
var (
	sanityBatches  = []int{1, 8, 32, 128, 256}
	sanityContexts = []int{512, 4096, 32768}
	sanityPrefills = []int{128, 2048, 8192}
	sanityTPs      = []int{1, 2, 4, 8}
)

// sanityMaxModelLen is the serving.max_model_len the deployments are
// prepared with: a cache that cannot hold one such request does not fit.
const sanityMaxModelLen = 4096

// sanityCase is one priced step and its bounds.
type sanityCase struct {
	model, gpu    string
	tp, batch, kv int
	// seconds is the step's price; floor its roofline floor; fixed the
	// decode step's allowed fixed costs, all in seconds.
	seconds, floor, fixed float64
	// cause is what a violation is attributed to (attribute).
	cause string
}

// ratio is how far over the floor the step's variable part is:
// (seconds - fixed) / floor.
func (c sanityCase) ratio() float64 { return (c.seconds - c.fixed) / c.floor }

func (c sanityCase) String() string {
	return fmt.Sprintf("%s on %s tp %d, batch %d, kv %d: %.3f ms, floor %.3f ms, fixed %.3f ms, ratio %.2f (cause %s)",
		c.model, c.gpu, c.tp, c.batch, c.kv, c.seconds*1e3, c.floor*1e3, c.fixed*1e3, c.ratio(), c.cause)
}

// sanityDeployment is one prepared (model, GPU, TP) of the walk.
type sanityDeployment struct {
	cfg *model.Config
	gpu *hardware.GPU
	// name is the GPU as cases and the known tables name it
	// (sanityVariants).
	name string
	tp   int
	prep *sim.Prepared
	// kvTokens is what the derived KV cache holds, tokens.
	kvTokens int
	// peak is the fastest compute peak its GEMMs may run at, FLOP/s
	// (fastestPeak).
	peak float64
}

// sanityVariant is one kernel profile of a GPU the walk prices with:
// engine is the release to deploy (zero: the GPU's default profile), name
// what cases and the known tables call it.
type sanityVariant struct {
	engine engine.Engine
	name   string
}

// sanityVariants are the kernel profiles of gpu the walk checks: its
// default profile (named gpu.Name) and each per-release profile that is
// not its default (named "<gpu>@<engine>-<release>", as h100@vllm-0.24.0
// beside the single-file default of h100).
func sanityVariants(t *testing.T, gpu *hardware.GPU) []sanityVariant {
	t.Helper()
	vs := []sanityVariant{{name: gpu.Name}}
	for _, r := range gpu.Releases {
		if gpu.Profile != nil && gpu.Profile.Engine == r.Profile.Engine {
			continue // the default profile
		}
		e, err := engine.Parse(r.Engine + "@" + r.ReleaseString())
		if err != nil {
			t.Fatalf("%s: %v", r.File, err)
		}
		vs = append(vs, sanityVariant{engine: e, name: gpu.Name + "@" + r.Engine + "-" + r.ReleaseString()})
	}
	return vs
}

// sanityDeployments prepares every catalog (model, GPU, TP) that fits,
// skipping those whose TP does not divide the heads (a tp field error) or
// whose weights leave no room (sim.DoesNotFitError, or a cache that cannot
// hold one sanityMaxModelLen request). Any other error fails the test.
func sanityDeployments(t *testing.T) []sanityDeployment {
	t.Helper()
	var out []sanityDeployment
	for _, cfg := range model.List() {
		for _, gpu := range hardware.List() {
			for _, v := range sanityVariants(t, &gpu) {
				for _, tp := range sanityTPs {
					if d, ok := sanityDeploy(t, cfg, gpu, v, tp); ok {
						out = append(out, d)
					}
				}
			}
		}
	}
	return out
}

// sanityDeploy prepares cfg on gpu's kernel profile v at TP tp with the
// default settings; false when it does not fit or TP does not divide the
// heads (sanityDeployments). Any other error fails the test.
func sanityDeploy(t *testing.T, cfg model.Config, gpu hardware.GPU, v sanityVariant, tp int) (sanityDeployment, bool) {
	t.Helper()
	st := settings.DefaultDeployment()
	st.TP = tp
	st.Engine = v.engine
	st.Serving.MaxModelLen = min(sanityMaxModelLen, cfg.MaxPositionEmbeddings)
	c, g := cfg, gpu
	p, err := sim.Prepare(sim.Deployment{Model: &c, GPU: &g, Settings: st})
	var fe *settings.FieldError
	var nf *sim.DoesNotFitError
	switch {
	case err == nil:
	case errors.As(err, &nf):
		return sanityDeployment{}, false
	case errors.As(err, &fe) && (fe.Key == "tp" || fe.Key == "serving.max_model_len"):
		return sanityDeployment{}, false
	default:
		t.Fatalf("%s on %s tp %d: %v", cfg.Name, v.name, tp, err)
	}
	d := sanityDeployment{cfg: &c, gpu: &g, name: v.name, tp: tp, prep: p,
		kvTokens: p.Scheduler.NumGPUBlocks * p.Scheduler.BlockSize}
	d.peak = fastestPeak(t, &d)
	return d, true
}

// precisionBits is the bits per element of a resolved dtype name.
func precisionBits(t *testing.T, name string) float64 {
	t.Helper()
	p, err := roofline.LookupPrecision(name)
	if err != nil {
		t.Fatalf("precision %q: %v", name, err)
	}
	return p.Bits
}

// decodeBytes is the bytes one GPU must read for a decode step of batch
// requests, each attending to kv tokens, computed from the model's
// parameter counts and layer types (not from the step model's operators):
//
//	weights = WeightBytesPerGPU
//	          - the embedding table (a decode gathers batch rows of it;
//	            tied embeddings are read whole by the LM head)
//	          - routed experts no token picks: RoutedExperts/TP x (1 - touched/E)
//	            at the experts' bits, touched = E (1 - (1 - k/E)^batch)
//	            (uniform routing of independent requests)
//	KV      = batch x sum over layers of KVTokensStored(layer, kv)
//	          x KV bytes per token of one attention layer on one GPU
//	          (2 x KV heads per GPU x head_dim x KV bits / 8, or MLA's latent;
//	          linear-attention and state-space layers hold none)
func decodeBytes(t *testing.T, d *sanityDeployment, batch, kv int) float64 {
	t.Helper()
	step := d.prep.Step
	opts := step.Options()
	pc := d.cfg.Params()
	tp := float64(d.tp)
	w := step.WeightBytesPerGPU()
	if !d.cfg.TiedEmbeddings {
		embBits := 16.0
		if opts.EmbeddingDType != "" {
			embBits = precisionBits(t, opts.EmbeddingDType)
		} else if wb := precisionBits(t, opts.WeightDType); wb >= 16 {
			embBits = wb
		}
		w -= pc.Embedding / tp * embBits / 8
	}
	if moe := d.cfg.MoE; moe != nil && pc.RoutedExperts > 0 {
		exp := opts.ExpertDType
		if exp == "" {
			exp = opts.WeightDType
		}
		touched := roofline.ExpectedExpertsTouched(moe.NumExperts, moe.TopK, batch)
		w -= pc.RoutedExperts / tp * precisionBits(t, exp) / 8 * (1 - touched/float64(moe.NumExperts))
	}
	// KV bytes per token per attention layer: exact when every attention
	// layer holds the same KV width, the layers' mean when global layers
	// hold a wider one than sliding layers (then approximate).
	perLayerToken := step.KVBytesPerTokenPerGPU() / float64(d.cfg.NumAttentionLayers())
	return w + float64(batch)*keysAttended(d.cfg, kv)*perLayerToken
}

// keysAttended is the keys one query at KV length kv attends to, summed
// over the layers (KVTokensStored: the window on sliding layers).
func keysAttended(c *model.Config, kv int) float64 {
	var n float64
	for l := range c.NumLayers {
		n += float64(c.KVTokensStored(l, kv))
	}
	return n
}

// stepFLOPs is the FLOPs one GPU must compute for tokens new tokens that
// score keys (query, key) pairs in all, summed over the tokens and the
// layers, from the model's parameter counts: 2 tokens x (attention, dense
// MLP, shared experts and the top-k routed experts per MoE layer) / TP,
// plus 4 x heads/TP x head_dim per attended key (QK^T and PV). The LM head
// is left out (a floor).
func stepFLOPs(d *sanityDeployment, tokens int, keys float64) float64 {
	c := d.cfg
	pc := c.Params()
	params := pc.Attention + pc.DenseMLP + pc.SharedExperts
	if c.MoE != nil {
		params += float64(c.NumMoELayers()*min(c.MoE.TopK, c.MoE.NumExperts)) * c.ExpertParams()
	}
	tp := float64(d.tp)
	return 2*float64(tokens)*params/tp + 4*float64(c.NumHeads)/tp*float64(c.HeadDim)*keys
}

// decodeFloor is the roofline floor of a decode step, seconds:
// max(decodeBytes / bandwidth, stepFLOPs / peak).
func decodeFloor(t *testing.T, d *sanityDeployment, batch, kv int) float64 {
	t.Helper()
	bytes := decodeBytes(t, d, batch, kv)
	flops := stepFLOPs(d, batch, float64(batch)*keysAttended(d.cfg, kv))
	return max(bytes/d.gpu.BandwidthBytesPerSec(), flops/d.peak)
}

// prefillFloor is the FLOP floor of a prefill chunk of n tokens with
// nothing cached, seconds: stepFLOPs with the causal key count
// n (n+1) / 2 on the full-attention layers (sliding layers' attention left
// out) over the fastest peak.
func prefillFloor(d *sanityDeployment, n int) float64 {
	fn := float64(n)
	return stepFLOPs(d, n, fn*(fn+1)/2*float64(d.cfg.NumFullLayers())) / d.peak
}

// decodeAllowance is the stated fixed cost of a priced step, seconds: every
// operator's launch time, the all-reduce rows (interconnect time the floor
// does not count), and the engine's per-step and per-request costs and all
// of its host work (an upper bound on the part a step waits for). The
// engine's per-(request, KV head, layer) cost is not in it: it grows with
// the KV heads, as the KV bytes do, and must fit in the slack.
func decodeAllowance(ops []roofline.OpTime, e roofline.EngineTerms, requests int) float64 {
	var s float64
	for _, op := range ops {
		s += op.LaunchS
		if op.Kind == roofline.KindAllReduce {
			s += op.Seconds
		}
	}
	r := float64(requests)
	return s + (e.StepOverheadUS+e.PerRequestUS*r+e.HostStepUS+e.HostPerRequestUS*r)*1e-6
}

// causeKVHead names the engine's per-(request, KV head, layer) term as a
// cause.
const causeKVHead = "per_request_kv_head_us"

// attribute names what puts c outside its bound: causeKVHead when the step
// is within decodeSlack without the engine's per-(request, KV head, layer)
// cost (an over-bound case only), else the operator whose time is furthest
// from its own roofline max(bytes / bandwidth, FLOPs / peak) (over: most
// time above it; under: most time below it).
func attribute(d *sanityDeployment, c sanityCase, ops []roofline.OpTime, over bool) string {
	if over {
		e := d.prep.Step.EngineTerms()
		kvh := e.PerRequestKVHeadUS * float64(c.batch*d.prep.Step.KVHeadsPerGPU()*d.cfg.NumLayers) * 1e-6
		if kvh > 0 && (c.seconds-kvh-c.fixed)/c.floor <= decodeSlack {
			return causeKVHead
		}
	}
	bw := d.gpu.BandwidthBytesPerSec()
	best, name := math.Inf(-1), "none"
	for _, op := range ops {
		if op.Kind == roofline.KindAllReduce || op.Kind == roofline.KindOverhead {
			continue
		}
		roof := op.Bytes / bw
		if pk, ok := d.gpu.PeakFLOPS(op.ComputePrecision); ok && pk > 0 {
			roof = max(roof, op.FLOPs/pk)
		}
		gap := op.Seconds - op.LaunchS - roof
		if !over {
			gap = -gap
		}
		if gap > best {
			best, name = gap, op.Name
		}
	}
	return name
}

// causeBytes names a step model that reads fewer bytes than the floor
// (a weight, expert or KV byte-count rule) as a cause.
const causeBytes = "bytes_below_floor"

// attributeUnder names what puts an under-floor case c below it:
// causeBytes when the step's operators move fewer DRAM bytes than
// decodeBytes, else the operator furthest below its own roofline.
func attributeUnder(t *testing.T, d *sanityDeployment, c sanityCase, ops []roofline.OpTime) string {
	t.Helper()
	var moved float64
	for _, op := range ops {
		if op.Kind != roofline.KindAllReduce {
			moved += op.Bytes
		}
	}
	if moved < decodeBytes(t, d, c.batch, c.kv)*(1-1e-9) {
		return causeBytes
	}
	return attribute(d, c, ops, false)
}

// fastestPeak is the highest compute peak a step of d may run its GEMMs
// at, FLOP/s: that of the activations' or of any weight format's compute
// precision the GPU has a peak for (W8A8, W4A4).
func fastestPeak(t *testing.T, d *sanityDeployment) float64 {
	t.Helper()
	opts := d.prep.Step.Options()
	best := 0.0
	for _, name := range []string{opts.ActDType, opts.WeightDType, opts.ExpertDType, opts.AttentionDType} {
		if name == "" {
			continue
		}
		p, err := roofline.LookupPrecision(name)
		if err != nil {
			t.Fatalf("precision %q: %v", name, err)
		}
		if f, ok := d.gpu.PeakFLOPS(p.Compute); ok {
			best = max(best, f)
		}
	}
	if best == 0 {
		t.Fatalf("%s on %s: no compute peak for %+v", d.cfg.Name, d.gpu.Name, opts)
	}
	return best
}

// knownKey is a cause (attribute) on a GPU.
type knownKey struct{ cause, gpu string }

// known is a recorded violation: bound is the worst ratio seen (over: the
// largest; under: the smallest), which the test enforces, so an entry
// still fails when it gets worse.
type known struct {
	bound  float64
	reason string
}

func TestCatalogDecodeWithinRooflineBounds(t *testing.T) {
	deps := sanityDeployments(t)
	if len(deps) == 0 {
		t.Fatal("no catalog deployment fits")
	}
	checkDecodeBounds(t, deps, knownDecodeOver(), knownDecodeUnder())
}

// checkDecodeBounds prices every decode case of deps (sanityBatches x
// sanityContexts where the cache holds them) and fails on the cases out of
// bounds that the known tables do not record, on recorded entries they
// exceed, and on recorded entries that no longer occur.
func checkDecodeBounds(t *testing.T, deps []sanityDeployment, knownOver, knownUnder map[knownKey]known) {
	t.Helper()
	var under, over []sanityCase
	worstOver, worstUnder := map[knownKey]float64{}, map[knownKey]float64{}
	checked := 0
	for i := range deps {
		d := &deps[i]
		for _, b := range sanityBatches {
			for _, kv := range sanityContexts {
				if kv > d.cfg.MaxPositionEmbeddings || b*kv > d.kvTokens {
					continue
				}
				in := roofline.StepInput{Decodes: slices.Repeat([]int{kv}, b)}
				ops := d.prep.Step.Breakdown(&in)
				c := sanityCase{model: d.cfg.Name, gpu: d.name, tp: d.tp, batch: b, kv: kv,
					seconds: d.prep.Step.Cost(&in).Seconds, floor: decodeFloor(t, d, b, kv),
					fixed: decodeAllowance(ops, d.prep.Step.EngineTerms(), b)}
				checked++
				switch {
				case c.seconds < c.floor*(1-1e-9):
					c.fixed = 0 // the lower bound allows no fixed costs
					c.cause = attributeUnder(t, d, c, ops)
					k := knownKey{c.cause, c.gpu}
					if w, ok := worstUnder[k]; !ok || c.ratio() < w {
						worstUnder[k] = c.ratio()
					}
					if e, ok := knownUnder[k]; !ok || c.ratio() < e.bound {
						under = append(under, c)
					}
				case c.ratio() > decodeSlack:
					c.cause = attribute(d, c, ops, true)
					k := knownKey{c.cause, c.gpu}
					worstOver[k] = max(worstOver[k], c.ratio())
					if e, ok := knownOver[k]; !ok || c.ratio() > e.bound {
						over = append(over, c)
					}
				}
			}
		}
	}
	t.Logf("%d deployments, %d decode steps checked", len(deps), checked)
	reportWorst(t, "decode steps below their roofline floor (not in knownDecodeUnder, or worse than recorded)", under,
		func(c sanityCase) float64 { return -c.ratio() })
	reportWorst(t, fmt.Sprintf("decode steps over %.1f x roofline floor + fixed costs (not in knownDecodeOver, or worse than recorded)", decodeSlack), over,
		sanityCase.ratio)
	checkStale(t, "knownDecodeOver", knownOver, worstOver)
	checkStale(t, "knownDecodeUnder", knownUnder, worstUnder)
	if testing.Verbose() {
		logKnown(t, "over", worstOver)
		logKnown(t, "under", worstUnder)
	}
}

// checkStale fails for each entry of a known table whose cause no longer
// occurs on its GPU.
func checkStale(t *testing.T, table string, recorded map[knownKey]known, seen map[knownKey]float64) {
	t.Helper()
	for k := range recorded {
		if _, ok := seen[k]; !ok {
			t.Errorf("%s: %s on %s no longer occurs: remove the entry", table, k.cause, k.gpu)
		}
	}
}

// logKnown logs the worst ratio of every (cause, GPU) seen, sorted, as the
// rows of a known table.
func logKnown(t *testing.T, what string, seen map[knownKey]float64) {
	t.Helper()
	keys := make([]knownKey, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cause != keys[j].cause {
			return keys[i].cause < keys[j].cause
		}
		return keys[i].gpu < keys[j].gpu
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "{%q, %q}: %.2f\n", k.cause, k.gpu, seen[k])
	}
	t.Logf("worst %s-bound ratios by (cause, gpu):\n%s", what, b.String())
}

func TestCatalogPrefillAboveFLOPFloor(t *testing.T) {
	var below []sanityCase
	checked := 0
	for _, d := range sanityDeployments(t) {
		for _, n := range sanityPrefills {
			if n > d.cfg.MaxPositionEmbeddings || n > d.kvTokens {
				continue
			}
			in := roofline.StepInput{Prefills: []roofline.Chunk{{Tokens: n, Sampled: true}}}
			c := sanityCase{model: d.cfg.Name, gpu: d.name, tp: d.tp, batch: 1, kv: n,
				seconds: d.prep.Step.Cost(&in).Seconds, floor: prefillFloor(&d, n), cause: "-"}
			checked++
			if c.seconds < c.floor*(1-1e-9) {
				below = append(below, c)
			}
		}
	}
	t.Logf("%d prefill steps checked", checked)
	reportWorst(t, "prefill steps below their FLOP floor", below, func(c sanityCase) float64 { return -c.ratio() })
}

// reportWorst fails t listing the cases, worst (largest badness) first, at
// most 20 of them.
func reportWorst(t *testing.T, what string, cases []sanityCase, badness func(sanityCase) float64) {
	t.Helper()
	if len(cases) == 0 {
		return
	}
	sort.SliceStable(cases, func(i, j int) bool { return badness(cases[i]) > badness(cases[j]) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s; worst:\n", len(cases), what)
	for _, c := range cases[:min(len(cases), 20)] {
		fmt.Fprintf(&b, "  %v\n", c)
	}
	t.Error(b.String())
}
