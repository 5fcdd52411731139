package calibrate

import (
	"math"
	"sort"

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

// arSeconds is the profile's all-reduce model for one point.
func arSeconds(pt hardware.AllReducePoint, bytes float64, n int) float64 {
	a := hardware.AllReduce{ByGPUs: map[int]hardware.AllReducePoint{n: pt}}
	return a.Seconds(bytes, n)
}

// FitAllReduce fits the latency + bus-bandwidth model
//
//	t = LatencyUS*1e-6 + 2 (n-1)/n bytes / (BusBandwidthGBps*1e9)
//
// to points of a single GPU count n by least squares on log time, with both
// parameters fitted as logarithms (so both stay > 0). Deterministic.
func FitAllReduce(points []ARPoint, n int) (hardware.AllReducePoint, error) {
	if len(points) == 0 {
		return hardware.AllReducePoint{}, errNoSamples
	}
	f := 2 * float64(n-1) / float64(n)
	obj := func(x []float64) float64 {
		lat, bw := math.Exp(x[0])*1e-6, math.Exp(x[1])*1e9
		var s float64
		for _, p := range points {
			d := math.Log(lat+f*p.Bytes/bw) - math.Log(p.Seconds)
			s += d * d
		}
		return s / float64(len(points))
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
	x, _ := nelderMead(obj, x0, 2000)
	x, _ = nelderMead(obj, x, 2000)
	return hardware.AllReducePoint{LatencyUS: math.Exp(x[0]), BusBandwidthGBps: math.Exp(x[1])}, nil
}
