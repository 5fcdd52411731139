package kernels

import (
	"math"
	"sort"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
)

// ARPoint is one all-reduce measurement: GPU count, message bytes and the
// time of the faster measured implementation.
type ARPoint struct {
	NumGPUs int
	Bytes   float64
	Seconds float64
	// Backend is the implementation that was faster at this size
	// ("vllm_graph" or "nccl").
	Backend string
}

// BestAllReduce merges the custom all-reduce table (graph mode only: vLLM
// captures decode steps in CUDA graphs, and its custom all-reduce is used in
// graph mode) with the NCCL all_reduce rows: at each (GPU count, message
// size) it keeps the faster of the two, because vLLM dispatches small
// messages to its custom kernel and large ones to NCCL, choosing the faster
// path. The result is sorted by GPU count, then size.
func BestAllReduce(custom, nccl []CollectiveRow) []ARPoint {
	type key struct {
		n int
		e int
	}
	best := map[key]ARPoint{}
	consider := func(r CollectiveRow) {
		k := key{r.NumGPUs, r.Elements}
		s := r.LatencyMS * 1e-3
		if b, ok := best[k]; !ok || s < b.Seconds {
			best[k] = ARPoint{NumGPUs: r.NumGPUs, Bytes: r.Bytes(), Seconds: s, Backend: r.Backend}
		}
	}
	for _, r := range custom {
		if r.Backend == "vllm_graph" {
			consider(r)
		}
	}
	for _, r := range nccl {
		if r.Op == "all_reduce" {
			consider(r)
		}
	}
	out := make([]ARPoint, 0, len(best))
	for _, p := range best {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NumGPUs != out[j].NumGPUs {
			return out[i].NumGPUs < out[j].NumGPUs
		}
		return out[i].Bytes < out[j].Bytes
	})
	return out
}

// allReduceByGPUs groups the tables' best all-reduce points
// (BestAllReduce) by GPU count: the counts in increasing order, and each
// count's points by message size.
func allReduceByGPUs(k *Tables) ([]int, map[int][]ARPoint) {
	byN := map[int][]ARPoint{}
	var ns []int
	for _, p := range BestAllReduce(k.CustomAllReduce, k.NCCL) {
		if _, ok := byN[p.NumGPUs]; !ok {
			ns = append(ns, p.NumGPUs)
		}
		byN[p.NumGPUs] = append(byN[p.NumGPUs], p)
	}
	sort.Ints(ns)
	return ns, byN
}

// minARSegment is the fewest message sizes each algorithm of a two-regime
// all-reduce fit must cover.
const minARSegment = 3

// FitAllReduce fits the all-reduce model of one GPU count n to points
// (hardware.AllReducePoint.Seconds): latency + bus bandwidth,
//
//	t = LatencyUS*1e-6 + 2 (n-1)/n bytes / (BusBandwidthGBps*1e9),
//
// either one pair for every size, or one pair up to a switch size and a
// second pair above it (vLLM's custom all-reduce below its size limit,
// NCCL above). Every split of the sizes, sorted, into two runs of at least
// minARSegment sizes is tried; the one with the least total squared log
// error wins if it at least halves the single pair's error. The switch is placed
// at the geometric mean of the two sizes either side of the split. Each
// pair is fitted by least squares on log time with both parameters as
// logarithms (so both stay > 0). Deterministic.
func FitAllReduce(points []ARPoint, n int) (hardware.AllReducePoint, error) {
	if len(points) == 0 {
		return hardware.AllReducePoint{}, errNoSamples
	}
	ps := append([]ARPoint(nil), points...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Bytes < ps[j].Bytes })
	single, singleSSE := fitARPair(ps, n)
	var split hardware.AllReducePoint
	splitSSE := math.Inf(1)
	for j := minARSegment; j <= len(ps)-minARSegment; j++ {
		if ps[j].Bytes == ps[j-1].Bytes {
			continue
		}
		lo, sLo := fitARPair(ps[:j], n)
		hi, sHi := fitARPair(ps[j:], n)
		if sLo+sHi < splitSSE {
			splitSSE = sLo + sHi
			split = lo
			split.SwitchBytes = math.Sqrt(ps[j-1].Bytes * ps[j].Bytes)
			split.LargeLatencyUS, split.LargeBusBandwidthGBps = hi.LatencyUS, hi.BusBandwidthGBps
		}
	}
	// Two extra parameters and a switch must earn their place: the split
	// is kept only when it at least halves the squared error (data that
	// one pair fits exactly keep one pair).
	if splitSSE < 0.5*singleSSE && singleSSE-splitSSE > 1e-9*float64(len(ps)) {
		return split, nil
	}
	return single, nil
}

// fitARPair fits one latency + bandwidth pair to points (non-empty) and
// returns it with its sum of squared log errors.
func fitARPair(points []ARPoint, n int) (hardware.AllReducePoint, float64) {
	f := 2 * float64(n-1) / float64(n)
	obj := func(x []float64) float64 {
		lat, bw := math.Exp(x[0])*1e-6, math.Exp(x[1])*1e9
		var s float64
		for _, p := range points {
			d := math.Log(lat+f*p.Bytes/bw) - math.Log(p.Seconds)
			s += d * d
		}
		return s
	}
	// Starts: smallest-message time as latency, largest-message rate as bandwidth.
	minT, maxB, tAtMax := math.Inf(1), 0.0, 0.0
	for _, p := range points {
		minT = math.Min(minT, p.Seconds)
		if p.Bytes > maxB {
			maxB, tAtMax = p.Bytes, p.Seconds
		}
	}
	x0 := []float64{math.Log(minT * 1e6), math.Log(math.Max(f*maxB/tAtMax/1e9, 1e-3))}
	x, _ := fit.NelderMead(obj, x0, 2000)
	x, v := fit.NelderMead(obj, x, 2000)
	return hardware.AllReducePoint{LatencyUS: math.Exp(x[0]), BusBandwidthGBps: math.Exp(x[1])}, v
}
