package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// FamilyMoEPrefix + the expert format ("bf16", "fp8_e4m3", "fp8_block",
// "int4", "nvfp4") names a fused-MoE family: one entry of
// hardware.FusedMoE, fitted on that moe_dtype's rows of both routing
// distributions.
const FamilyMoEPrefix = "moe_"

// moeFormat is the hardware.FusedMoE key of a moe_dtype: the roofline name
// of its weight format.
func moeFormat(dtype string) (string, bool) {
	w, _, ok := MoEPrecisions(dtype)
	if !ok {
		return "", false
	}
	return w.Name, true
}

// MoERouting is what one GPU's share of a measured MoE row serves: the
// (token, expert) pairs and the distinct experts among them, as the
// benchmark generated them.
type MoERouting struct {
	Pairs, Touched float64
}

// BalancedRouting is the layout of AIConfigurator's "balanced" rows: the
// T k (token, expert) pairs are spread evenly over the E experts (token t
// picks experts t, t + E/k, ... modulo E), so they touch min(E, T k)
// distinct experts, and each EP rank serves its 1/EP share of pairs and
// experts. (The measured times bear this out: at one token, the kernel's
// time falls as 1/EP.)
func BalancedRouting(tokens, experts, topK, ep int) MoERouting {
	ep = max(ep, 1)
	pairs := float64(tokens * topK)
	return MoERouting{Pairs: pairs / float64(ep), Touched: math.Min(float64(experts), pairs) / float64(ep)}
}

// PowerLawDraws is the number of routings PowerLawRouting averages; the
// benchmark itself averages 10.
const PowerLawDraws = 32

// PowerLawRouting is the expected routing of AIConfigurator's
// "power_law_<alpha>" rows, by re-running its generator with a seeded
// source: tokens per expert are drawn from a power law of exponent alpha on
// [1, 0.8 T] (on [0.01, 2] when T k <= E), scaled and rounded to sum T k
// (the rounding remainder goes to the largest, or comes off the smallest,
// experts); the EP rank with the most tokens is the one measured, with its
// pairs rounded up to a multiple of min(k, E/EP). Averaged over
// PowerLawDraws draws. O(draws E log E).
func PowerLawRouting(tokens, experts, topK, ep int, alpha float64, seed uint64) MoERouting {
	ep = max(ep, 1)
	local := experts / ep
	kLoc := min(topK, local)
	rng := rand.New(rand.NewPCG(seed, uint64(tokens)<<32|uint64(experts)<<8|uint64(ep)))
	xmin, xmax := 1.0, 0.8*float64(tokens)
	if tokens*topK <= experts {
		xmin, xmax = 0.01, 2
	}
	if xmax <= xmin {
		xmax = xmin * (1 + 1e-9)
	}
	a1 := 1 - alpha
	lo, hi := math.Pow(xmin, a1), math.Pow(xmax, a1)
	target := tokens * topK
	x := make([]float64, experts)
	n := make([]int, experts)
	idx := make([]int, experts)
	var out MoERouting
	for d := 0; d < PowerLawDraws; d++ {
		sum := 0.0
		for i := range x {
			x[i] = math.Pow((hi-lo)*rng.Float64()+lo, 1/a1)
			sum += x[i]
		}
		got := 0
		for i := range x {
			n[i] = int(math.RoundToEven(x[i] / sum * float64(target)))
			got += n[i]
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return n[idx[a]] > n[idx[b]] })
		for i := 0; got < target; i++ {
			n[idx[i%experts]]++
			got++
		}
		for i := 0; got > target; i++ {
			j := idx[experts-1-i%experts]
			if n[j] > 0 {
				n[j]--
				got--
			}
		}
		// The measured rank: the EP group of experts with the most tokens.
		best, bestSum := 0, -1
		for r := 0; r < ep; r++ {
			s := 0
			for _, v := range n[r*local : (r+1)*local] {
				s += v
			}
			if s > bestSum {
				best, bestSum = r, s
			}
		}
		touched := 0
		for _, v := range n[best*local : (best+1)*local] {
			if v > 0 {
				touched++
			}
		}
		pairs := bestSum
		if ep > 1 {
			pairs += (kLoc - bestSum%kLoc) % kLoc
		}
		out.Pairs += float64(pairs)
		out.Touched += float64(touched)
	}
	out.Pairs /= PowerLawDraws
	out.Touched /= PowerLawDraws
	return out
}

// moeRouting returns a row's routing, or ok false for an unknown
// distribution.
func moeRouting(r MoERow, seed uint64) (MoERouting, bool) {
	switch {
	case r.Distribution == "balanced":
		return BalancedRouting(r.Tokens, r.Experts, r.TopK, r.EPSize), true
	case strings.HasPrefix(r.Distribution, "power_law_"):
		a, err := strconv.ParseFloat(strings.TrimPrefix(r.Distribution, "power_law_"), 64)
		if err != nil || !(a > 1) {
			return MoERouting{}, false
		}
		return PowerLawRouting(r.Tokens, r.Experts, r.TopK, r.EPSize, a, seed), true
	}
	return MoERouting{}, false
}

// FusedMoECost is the roofline cost of a measured MoE row under its
// routing (roofline.MoEKernelCost: gated experts of width inter/tp).
func FusedMoECost(r MoERow, rt MoERouting) roofline.Cost {
	w, act, _ := MoEPrecisions(r.Dtype)
	return roofline.MoEKernelCost(rt.Pairs, rt.Touched, r.Hidden, r.Inter/max(r.TPSize, 1), true, w, act)
}

// moeSample is a row as a Sample the generic fitter reads with a compute
// curve indexed by tokens per expert: FLOPs carries tokens per expert and
// the peak is scaled by the same factor, so FLOPs/PeakFLOPS is still the
// kernel's compute time at peak and the curve's index is tokens per expert
// (hardware.FusedMoE).
//
// The token padding of MoETokenTile is folded into the peak as well, so
// the fitted curve describes the kernel beyond its tile padding.
func moeSample(c roofline.Cost, tpe float64, g *hardware.GPU, latencyMS float64) (Sample, error) {
	s, err := sampleOf(c, g, latencyMS)
	if err != nil {
		return s, err
	}
	if c.FLOPs > 0 && tpe > 0 {
		tile := moeTile()
		pad := tile.TokenPadding(0, tpe)
		s.PeakFLOPS *= tpe / c.FLOPs * pad
		s.FLOPs = tpe
	}
	return s, nil
}

// MoETokenTile is the token tile of fitted fused-MoE entries: 0, no
// explicit padding. (Folding a 16-row tile, the smallest BLOCK_SIZE_M of
// vLLM's Triton kernel, into the H100 fit raised the held-out median error
// from 12.7% to 17.3%: the measured efficiency grows smoothly with tokens
// per expert over the whole range, as the kernel's tile configuration
// changes with the batch, which the fitted curve describes directly.)
const MoETokenTile = 0

func moeTile() hardware.OpEfficiency { return hardware.OpEfficiency{TokenTile: MoETokenTile} }

// moeFamilies builds one fused-MoE family per expert format in k. Rows of
// unknown distributions or without the GPU's compute peak are skipped with
// a warning.
func moeFamilies(k *Tables, g *hardware.GPU) ([]opFamily, []string) {
	var warns []string
	byKey := map[string][]Sample{}
	groups := map[string][]string{}
	var order []string
	skipped := 0
	type routingKey struct {
		tokens, experts, topK, ep int
		dist                      string
	}
	cache := map[routingKey]MoERouting{}
	for _, r := range k.MoE {
		key, ok := moeFormat(r.Dtype)
		if !ok {
			skipped++
			continue
		}
		ck := routingKey{r.Tokens, r.Experts, r.TopK, r.EPSize, r.Distribution}
		rt, ok := cache[ck]
		if !ok {
			if rt, ok = moeRouting(r, 1); !ok {
				skipped++
				continue
			}
			cache[ck] = rt
		}
		c := FusedMoECost(r, rt)
		s, err := moeSample(c, roofline.TokensPerExpert(rt.Pairs, rt.Touched), g, r.LatencyMS)
		if err != nil {
			skipped++
			continue
		}
		s.Depth = roofline.MoEReductionDepth(r.Hidden, r.Inter/max(r.TPSize, 1), true)
		s.DefaultTiles = MoEDefaultTiles(r, key, g)
		if _, seen := byKey[key]; !seen {
			order = append(order, key)
		}
		byKey[key] = append(byKey[key], s)
		groups[key] = append(groups[key], moeShapeOf(r).Key(key))
	}
	if skipped > 0 {
		warns = append(warns, fmt.Sprintf("moe: %d rows skipped (unknown distribution or dtype, or no compute peak for their precision on %s)", skipped, g.Name))
	}
	sort.Strings(order)
	var fams []opFamily
	for _, key := range order {
		key := key
		fams = append(fams, opFamily{
			name:    FamilyMoEPrefix + key,
			samples: byKey[key],
			groups:  groups[key],
			get: func(p *hardware.Profile) hardware.OpEfficiency {
				if e, _, ok := p.FusedMoE.Lookup(key); ok {
					return e
				}
				return DefaultFusedMoEEntry()
			},
			set: func(p *hardware.Profile, e hardware.OpEfficiency) {
				if p.FusedMoE == nil {
					p.FusedMoE = hardware.FusedMoE{}
				}
				e.TokenTile = MoETokenTile
				p.FusedMoE[key] = e
			},
		})
	}
	return fams, warns
}

// DefaultFusedMoEEntry is the starting point of a fused-MoE fit (and what
// Validate uses when a profile has no fused entries):
// hardware.DefaultFusedMoE's bf16 entry.
func DefaultFusedMoEEntry() hardware.OpEfficiency {
	e, _, _ := hardware.DefaultFusedMoE().Lookup("bf16")
	return e
}

// MoEShape is an expert shape of a moe table: hidden size, expert width,
// top-k and expert count.
type MoEShape struct{ Hidden, Inter, TopK, Experts int }

// String is "hidden x inter, top-k of experts".
func (s MoEShape) String() string {
	return fmt.Sprintf("%dx%d top-%d of %d", s.Hidden, s.Inter, s.TopK, s.Experts)
}

// ParseMoEShape reads "hidden x inter x topk x experts" (e.g. 4096x1536x8x128).
func ParseMoEShape(v string) (MoEShape, error) {
	parts := strings.Split(strings.TrimSpace(v), "x")
	if len(parts) != 4 {
		return MoEShape{}, fmt.Errorf("%q: want hidden x inter x topk x experts, e.g. 4096x1536x8x128", v)
	}
	var n [4]int
	for i, p := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 1 {
			return MoEShape{}, fmt.Errorf("%q: %q is not a positive integer", v, p)
		}
		n[i] = x
	}
	return MoEShape{n[0], n[1], n[2], n[3]}, nil
}

func (s MoEShape) matches(r MoERow) bool {
	return r.Hidden == s.Hidden && r.Inter == s.Inter && r.TopK == s.TopK && r.Experts == s.Experts
}

// CalibrateMoE fits only the fused-MoE families of src's moe table (the
// other tables are read but not fitted), with Calibrate's hold-out split and
// report. Result.Profile.FusedMoE holds the fitted entries; the rest of the
// returned profile is not meant to be shipped (merge FusedMoE into a
// profile instead).
//
// Rows of the held-out shapes are left out of every fit and reported
// afterwards as families of their own ("moe_<format> @ <shape>", held-out
// errors only): how well the model predicts an expert shape it never saw,
// such as a served model's own.
func CalibrateMoE(src Source, opts Options, heldOut ...MoEShape) (*Result, error) {
	k, opts, err := readForFit(src, opts)
	if err != nil {
		return nil, err
	}
	if len(k.MoE) == 0 {
		return nil, fmt.Errorf("kernels %s: no moe table rows to fit", k.Dir)
	}
	only := &Tables{Dir: k.Dir, Engine: k.Engine, Provenance: k.Provenance}
	held := make([][]MoERow, len(heldOut))
rows:
	for _, r := range k.MoE {
		for i, s := range heldOut {
			if s.matches(r) {
				held[i] = append(held[i], r)
				continue rows
			}
		}
		only.MoE = append(only.MoE, r)
	}
	for i, s := range heldOut {
		if len(held[i]) == 0 {
			return nil, fmt.Errorf("held-out shape %s: no rows in %s", s, k.Dir)
		}
	}
	if len(only.MoE) == 0 {
		return nil, fmt.Errorf("kernels %s: every moe row is of a held-out shape", k.Dir)
	}
	for _, f := range k.Files {
		if strings.Contains(f.File, "moe") {
			only.Files = append(only.Files, f)
		}
	}
	if opts.MoEShapesOnly {
		return calibrateMoEShapesOnly(only, opts)
	}
	res, err := calibrateTables(only, opts)
	if err != nil {
		return nil, err
	}
	kept := res.Warnings[:0]
	for _, w := range res.Warnings {
		if !strings.HasPrefix(w, "allreduce:") && !strings.HasPrefix(w, "elementwise:") {
			kept = append(kept, w)
		}
	}
	res.Warnings = kept
	// Shape entries the starting profile held belong to an earlier fit:
	// only this fit's own (MoEPerShape) stand beside its format curves.
	res.Profile.FusedMoE, _ = res.Profile.FusedMoE.SplitShapes()
	res.GPU.Profile = res.Profile.Clone()
	if opts.MoEPerShape {
		shapes, warns, err := fitMoEShapes(only.MoE, opts, res.Profile)
		if err != nil {
			return nil, err
		}
		res.MoEShapes = shapes
		res.Warnings = append(res.Warnings, warns...)
		res.GPU.Profile = res.Profile.Clone()
	}
	for i, s := range heldOut {
		fams, _ := moeFamilies(&Tables{MoE: held[i]}, opts.GPU)
		for _, f := range fams {
			res.Families = append(res.Families, FamilyError{Family: f.name + " @ " + s.String(),
				Holdout: calibrate.SummarizeAPE(apes(f.samples, f.get(res.Profile)))})
		}
	}
	return res, nil
}
