package roofline

import "github.com/roofsim/roofsim/hardware"

// allReduceElementBytes is the element size assumed when counting the
// reduction FLOPs of an all-reduce: tensor-parallel all-reduces carry
// 16-bit activations.
const allReduceElementBytes = 2

// AllReduce is a ring all-reduce of a message of bytes across n GPUs, as
// the traffic and arithmetic each GPU performs:
//
//	ActBytes = 2 (n-1)/n * bytes                 (bus bytes sent per GPU)
//	FLOPs    = (n-1)/n * bytes/2                 (one add per received element,
//	                                              16-bit elements)
//
// The adds run on the vector units, so the Cost's ComputePrecision is
// "fp32" (the non-tensor-core rate). n <= 1 costs nothing. Analyze it with
// the interconnect bandwidth (AnalyzeOnGPU does).
func AllReduce(bytes float64, n int) Cost {
	c := Cost{Name: "allreduce", Kind: KindAllReduce, ComputePrecision: "fp32"}
	if n <= 1 || bytes <= 0 {
		return c
	}
	f := float64(n-1) / float64(n)
	c.ActBytes = 2 * f * bytes
	c.FLOPs = f * bytes / allReduceElementBytes
	return c
}

// allReduces adds n all-reduces of msg bytes each across gpus GPUs to acc,
// as one Breakdown row called name: their time is n x
// (Profile.AllReduceSeconds (the profile's latency + bandwidth model, or its
// measured table) x the serving all-reduce factor + the wait for the last
// rank, EngineTerms.allReduceSyncSeconds), added to CommS; their
// roofline time is the bus bytes of AllReduce over the interconnect
// bandwidth (none when the GPU has no interconnect figure). Every
// collective of a step (tensor-parallel all-reduces, the all-heads QK
// norm's, the DP MoE dispatch) is priced here. O(1).
func (m *StepModel) allReduces(acc *stepAcc, name string, n int, msg float64, gpus int) {
	var sync float64
	switch gpus {
	case m.tp:
		sync = m.arSyncS
	case m.tp * m.dp:
		sync = m.arSyncDispatchS
	default:
		sync = m.eng.allReduceSyncSeconds(gpus)
	}
	tr := float64(n) * m.prof.AllReduceSeconds(m.gpu, msg, gpus) * m.commScale
	tw := float64(n) * sync
	acc.c.CommS += tr + tw
	ar := AllReduce(msg, gpus)
	if m.linkBW > 0 {
		acc.rooflineS += float64(n) * ar.ActBytes / m.linkBW
	}
	if acc.ops != nil {
		*acc.ops = append(*acc.ops, OpTime{Name: name, Kind: KindAllReduce, Count: n,
			FLOPs: float64(n) * ar.FLOPs, Bytes: float64(n) * ar.ActBytes, Seconds: tr,
			Bound: MemoryBound, ComputePrecision: ar.ComputePrecision})
		if tw > 0 {
			// The wait moves no bytes and does no arithmetic: its own row,
			// so a breakdown shows what the collective costs and what the
			// ranks' spread adds to it.
			*acc.ops = append(*acc.ops, OpTime{Name: name + RankWaitSuffix, Kind: KindAllReduce, Count: n, Seconds: tw})
		}
	}
}

// RankWaitSuffix names the breakdown row of a collective's rank wait
// (EngineTerms.allReduceSyncSeconds): "allreduce" is followed by
// "allreduce_rank_wait" when the profile gives a spread.
const RankWaitSuffix = "_rank_wait"

// allReduceSyncSeconds is the time one collective across gpus GPUs waits
// for the last rank to reach it, in seconds: AllReduceSyncUS x the expected
// maximum of gpus independent standard normals (the ranks' arrival times
// spread with standard deviation AllReduceSyncUS; the barrier at the start
// of vLLM's custom all-reduce, csrc/custom_all_reduce.cuh barrier_at_start,
// and NCCL's ring both proceed only when every rank has arrived). 0 for
// one GPU. O(1).
func (e *EngineTerms) allReduceSyncSeconds(gpus int) float64 {
	if e.AllReduceSyncUS <= 0 || gpus <= 1 {
		return 0
	}
	return e.AllReduceSyncUS * hardware.ExpectedMaxStdNormal(gpus) * 1e-6
}
