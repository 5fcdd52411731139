package kernels

import (
	"math"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
)

// lossGrad is the robust loss of prepared.loss at x and its gradient with
// respect to every coordinate of x (written to g, len nParams; the
// coordinates a family does not use get 0). The model is the one eval
// computes; per row, with d = log t - log t_meas and t = max(compute,
// memory) + additive terms, dloss/dd = d / sqrt(1 + (d/c)^2) (softL1's
// derivative, halved by the mean's 2c^2 factor kept exact below) and
// dd/dθ = (dt/dθ) / t. The compute branch is a product, so its partial
// derivatives are the branch time times those of its logarithm; the max
// passes the gradient to the branch that is larger (compute on a tie, as
// eval breaks it). Cost: O(len(rows)) with one log, one sqrt and up to
// three exps per row, about twice an eval.
func (p *prepared) lossGrad(x, g []float64) float64 {
	clear(g)
	sc, s2 := fit.Sigmoid(x[0]), fit.Sigmoid(x[2])
	mc, ec := sc, minExp+(maxExp-minExp)*s2
	sm, s5 := fit.Sigmoid(x[3]), fit.Sigmoid(x[5])
	mm, em := sm, minExp+(maxExp-minExp)*s5
	dec := (maxExp - minExp) * s2 * (1 - s2) // dEc/dx2
	dem := (maxExp - minExp) * s5 * (1 - s5) // dEm/dx5
	bc, bm := x[1], x[4]
	tv := p.terms(x)
	launch, host, perSeq, kHalf, inNS, outNS, spillNS, spillH, l2s, expKHalf := tv.launch, tv.host, tv.perSeq, tv.kHalf, tv.inNS, tv.outNS, tv.spillNS, tv.spillH, tv.l2s, tv.expKHalf
	var dtMax, dtHalfLog, dtExp, s15, s17 float64
	if p.tiles {
		s15, s17 = fit.Sigmoid(x[15]), fit.Sigmoid(x[17])
		dtMax = hardware.MaxDefaultTilesSlowdown * s15
		dtHalfLog = x[16]
		dtExp = minExp + (maxExp-minExp)*s17
	}
	const c = KernelLossScale
	var sum float64
	for i := range p.logT {
		// tc, tmv: the two branches' times; the log-derivatives of the
		// active branch are collected in lc/lm below.
		var tcv, tmv float64
		var ecTerm, kF, eF, dF, dExpTerm float64
		if tc := p.tc[i]; tc > 0 {
			ecTerm = math.Exp(ec * (bc - p.logF[i]))
			tcv = tc * (1 + ecTerm) / mc
			kF, eF, dF = 1, 1, 1
			if k := p.k[i]; k > 0 {
				kF = 1 + kHalf/k
				tcv *= kF
			}
			if p.expDepth {
				eF = 1 + expKHalf*p.invDepth[i]
				tcv *= eF
			}
			if p.tiles && p.dflt[i] {
				dExpTerm = math.Exp(dtExp * (dtHalfLog - p.logF[i]))
				dF = 1 + dtMax/(1+dExpTerm)
				tcv *= dF
			}
		}
		var emTerm, l2F float64
		if tm := p.tm[i]; tm > 0 {
			emTerm = math.Exp(em * (bm - p.logB[i]))
			l2F = 1
			if p.l2 {
				l2F = 1 + l2s*p.l2res[i]
			}
			tmv = tm * (1 + emTerm) / (mm * l2F)
		}
		memory := tmv > tcv
		t := tcv
		if memory {
			t = tmv
		}
		t += launch
		if p.perSeq {
			t += perSeq * p.seqs[i]
		}
		var cross float64
		if p.depth {
			in := inNS
			if p.mkElems[i] > 0 {
				cross = hardware.Crossover(p.mkElems[i], spillH)
				in += spillNS * cross
			}
			t += in * p.mk[i]
			t += outNS * p.mn[i]
		}
		t += p.off[i]
		// A row at the host floor (fitOptions.hostFloor) is set by the
		// floor alone, as eval's max keeps the GPU time on a tie.
		floored := p.host && host > t
		if floored {
			t = host
		}
		d := math.Log(t) - p.logT[i]
		q := math.Sqrt(1 + (d/c)*(d/c))
		sum += 2 * c * c * (q - 1)
		// dloss_i/dt = 2 d / (q t); scaled by 1/n at the end.
		w := 2 * d / (q * t)
		if floored {
			g[18] += w * host
			continue
		}
		switch {
		case memory:
			a := w * tmv
			g[3] -= a * (1 - sm)
			r := emTerm / (1 + emTerm)
			g[4] += a * em * r
			g[5] += a * (bm - p.logB[i]) * r * dem
			if p.l2 {
				g[13] -= a * l2s * p.l2res[i] / l2F
			}
		case tcv > 0:
			a := w * tcv
			g[0] -= a * (1 - sc)
			r := ecTerm / (1 + ecTerm)
			g[1] += a * ec * r
			g[2] += a * (bc - p.logF[i]) * r * dec
			if p.depth && p.k[i] > 0 {
				g[8] += a * (kF - 1) / kF
			}
			if p.expDepth {
				g[14] += a * (eF - 1) / eF
			}
			if p.tiles && p.dflt[i] {
				den := 1 + dExpTerm
				g[15] += a * dtMax * (1 - s15) / den / dF
				dd := -dtMax * dExpTerm / (den * den) / dF
				g[16] += a * dd * dtExp
				g[17] += a * dd * (dtHalfLog - p.logF[i]) * (maxExp - minExp) * s17 * (1 - s17)
			}
		}
		g[6] += w * launch
		if p.perSeq {
			g[7] += w * perSeq * p.seqs[i]
		}
		if p.depth {
			g[9] += w * inNS * p.mk[i]
			g[10] += w * outNS * p.mn[i]
			if p.mkElems[i] > 0 {
				g[11] += w * spillNS * cross * p.mk[i]
				// dCrossover/dlog h = -4 C (1 - C).
				g[12] -= w * spillNS * p.mk[i] * 4 * cross * (1 - cross)
			}
		}
	}
	n := float64(len(p.logT))
	for j := range g {
		g[j] /= n
	}
	return sum / n
}
