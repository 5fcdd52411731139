package sweep

import "math"

// DefaultGPUCostsPerHour returns assumed prices in US dollars per GPU-hour,
// keyed by GPU catalog name. They are ASSUMPTIONS, not quotes: round figures
// typical of 2025 on-demand list prices at GPU cloud providers (hyperscalers
// often charge more, reserved capacity less). Override them with your own
// (the CLI's --gpu-cost). GPUs absent here (e.g. gb10, a desktop system)
// have no price, and their cost columns stay empty rather than guessed.
// A fresh map is returned on every call.
func DefaultGPUCostsPerHour() map[string]float64 {
	return map[string]float64{
		"t4":        0.35,
		"v100":      0.80,
		"a100-40gb": 1.30,
		"a100-80gb": 1.80,
		"h100":      2.90,
		"h100-pcie": 2.40,
		"h200":      3.80,
		"l4":        0.70,
		"l40s":      1.20,
		"b200":      6.00,
	}
}

// Plan is what serving a target rate with one configuration takes.
type Plan struct {
	// Replicas = ceil(target / max rate): instances, each loaded at most
	// to its max rate (with an even split).
	Replicas int
	// GPUs = Replicas * TP.
	GPUs int
	// CostPerHour = GPUs * price, US$/hour; NaN without a price.
	CostPerHour float64
	// CostPerMTok is the cost per million output tokens at the target
	// rate: CostPerHour / (target * output tokens per request * 3600) * 1e6;
	// NaN without a price.
	CostPerMTok float64
}

// PlanFor sizes a deployment for targetRPS requests/s given the instance's
// maximum rate maxRPS, its TP degree, the mean output tokens per request
// and the GPU's price in US$/GPU-hour (NaN or <= 0 for none). It returns
// false when the plan is not defined (no target, or maxRPS <= 0).
func PlanFor(targetRPS, maxRPS float64, tp int, outTokensPerReq, pricePerGPUHour float64) (Plan, bool) {
	if !(targetRPS > 0) || !(maxRPS > 0) || tp < 1 {
		return Plan{}, false
	}
	p := Plan{Replicas: int(math.Ceil(targetRPS/maxRPS - 1e-12)), CostPerHour: math.NaN(), CostPerMTok: math.NaN()}
	p.Replicas = max(p.Replicas, 1)
	p.GPUs = p.Replicas * tp
	if pricePerGPUHour > 0 {
		p.CostPerHour = float64(p.GPUs) * pricePerGPUHour
		if tokPerS := targetRPS * outTokensPerReq; tokPerS > 0 {
			p.CostPerMTok = p.CostPerHour / (tokPerS * 3600) * 1e6
		}
	}
	return p, true
}
