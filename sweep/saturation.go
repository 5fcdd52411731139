package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// saturationOverload is the saturation probe's arrival rate as a multiple
// of the analytic estimate (estimateRate): far enough above any
// configuration's capacity that its queue never empties while the middle
// half of the requests complete.
const saturationOverload = 20

// minSaturationRequests is the fewest completed requests from which the
// saturation probe measures a throughput; maxSaturationRequests the most it
// simulates (a workload with staged clients, whose request counts grow
// with the rate, may have more at that rate: it is not probed).
const (
	minSaturationRequests = 8
	maxSaturationRequests = 2 * zeroLoadRequests
)

// errNoSaturation says that the saturation probe was not run.
var errNoSaturation = errors.New("no saturation probe")

// finishSink keeps the finish times (s) of completed requests.
type finishSink struct {
	ctx    context.Context
	finish []float64
}

func (f *finishSink) Request(rec *traces.RequestRecord) error {
	if rec.Status == traces.StatusOK && !math.IsNaN(rec.FinishS) {
		f.finish = append(f.finish, rec.FinishS)
	}
	return f.ctx.Err()
}

func (f *finishSink) Step(*traces.StepRecord) error { return nil }

var _ sim.Sink = (*finishSink)(nil)

// saturation runs the saturation probe: the workload w (at most
// zeroLoadRequests requests) offered at saturationOverload times the
// analytic estimate, so that requests queue from the start and the
// instance runs at its largest batch. It returns the probe (for the log:
// the offered rate, its p99 latencies, and SaturationRPS, the completed
// requests per second over the middle half of the completions, when the
// queue is full) and its statistics. ok is false when too few requests
// completed to measure. It returns errNoSaturation, without simulating,
// when the workload refuses that rate or would have more than
// maxSaturationRequests requests at it.
func (p *prober) saturation(ctx context.Context, w *workload.Spec, analytic float64) (Probe, *traces.Stats, bool, error) {
	rate := math.Min(saturationOverload*analytic, limits.MaxRate)
	pr := Probe{RateRPS: rate, Saturation: true, TTFTP99Ms: math.NaN(), TPOTP99Ms: math.NaN(), Failed: "saturation probe (no verdict)"}
	gen, err := workload.NewGenerator(w.WithRate(rate), p.seed)
	if err != nil {
		// The probe is optional: a rate the workload refuses skips it.
		return pr, nil, false, fmt.Errorf("%w: %v", errNoSaturation, err)
	}
	if n, known := gen.Totals(); !known || n > maxSaturationRequests {
		// Staged clients' request counts grow with the rate: not worth it.
		return pr, nil, false, errNoSaturation
	}
	sink := &finishSink{ctx: ctx}
	res, err := sim.Run(p.cfg.WithSpeculationSeed(p.seed), gen, sink)
	if err != nil {
		return pr, nil, false, err
	}
	st := res.Summary.Stats
	pr.TTFTP99Ms, pr.TPOTP99Ms = st.TTFTms.P99, st.TPOTms.P99
	n := len(sink.finish)
	if n < minSaturationRequests {
		return pr, &st, false, nil
	}
	slices.Sort(sink.finish)
	a, b := sink.finish[n/4], sink.finish[3*n/4]
	if !(b > a) {
		return pr, &st, false, nil
	}
	pr.SaturationRPS = float64(3*n/4-n/4) / (b - a)
	return pr, &st, true, nil
}

// minStartFraction bounds startFraction from below.
const minStartFraction = 0.02

// startFraction is where the rate search starts, as a fraction of the
// saturation throughput, from the latencies at zero load (zero) and at
// saturation (sat): the smallest over the SLO's bounds of
//
//   - for a TTFT or E2E bound, whose value is dominated by waiting, 1 -
//     v0/limit: a sojourn time that grows like v0/(1 - load), as in a
//     single-server queue, reaches the limit there;
//   - for a TPOT or ITL bound, whose value grows with the batch rather
//     than with a queue, the square root of (limit - v0)/(vsat - v0), the
//     fraction of saturation where the chord between zero load and
//     saturation reaches the limit: per-token time grows faster than
//     linearly toward saturation (the batch grows with the rate and with
//     the per-token time), so the chord reaches the limit too early; the
//     root is about right on the measured grids (1 when vsat <= limit: the
//     bound holds even at saturation).
//
// Both are rough; the search corrects them. The result is in
// [minStartFraction, 1].
func startFraction(slo SLO, zero, sat *traces.Stats) float64 {
	g := 1.0
	for _, b := range slo.Bounds {
		l, v0 := b.LimitMs(), b.ValueMs(zero)
		if math.IsNaN(v0) {
			continue
		}
		switch b.Metric {
		case "ttft", "e2e":
			g = math.Min(g, 1-v0/l)
		default:
			if vs := b.ValueMs(sat); vs > l && vs > v0 {
				g = math.Min(g, math.Sqrt((l-v0)/(vs-v0)))
			}
		}
	}
	return math.Max(g, minStartFraction)
}
