package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/table"
	"github.com/roofsim/roofsim/roofline"
)

// spotPrecision is one Kernel Spot Check precision: the weight and
// activation formats of roofline's precision catalog it stands for.
type spotPrecision struct {
	Name, Weight, Act string
}

// spotPrecisions are the panel's precisions in display order. Every one
// but int4 is a native matmul (weights and activations in the format:
// W8A8, W4A4); int4 is weight-only (W4A16), as the agent times it.
func spotPrecisions(g *hardware.GPU) []spotPrecision {
	act16 := "bf16"
	if _, ok := g.PeakFLOPS("bf16"); !ok {
		act16 = "fp16"
	}
	return []spotPrecision{
		{"fp16", "fp16", "fp16"},
		{"bf16", "bf16", "bf16"},
		{"fp8", "fp8_e4m3", "fp8_e4m3"},
		{"nvfp4", "nvfp4", "nvfp4"},
		{"mxfp4", "mxfp4", "mxfp4"},
		{"int8", "int8", "int8"},
		{"int4", "int4", act16},
	}
}

type spotRequest struct {
	gpuRef
	M          int      `json:"m"`
	N          int      `json:"n"`
	K          int      `json:"k"`
	Precisions []string `json:"precisions"`
	// Measure asks the measurement agent (--measure-url) to time each
	// supported precision too.
	Measure bool `json:"measure"`
}

// spotPoint is one precision's prediction, with the measurement when the
// agent gave one. Rates are FLOP/s (integer ops for int8), bandwidths
// bytes/s, times seconds.
type spotPoint struct {
	Precision        string  `json:"precision"`
	Status           string  `json:"status"` // "ok" or "unsupported"
	Reason           string  `json:"reason,omitempty"`
	ComputePrecision string  `json:"compute_precision,omitempty"`
	M                int     `json:"m"`
	N                int     `json:"n"`
	K                int     `json:"k"`
	FLOPs            float64 `json:"flops,omitempty"`
	Bytes            float64 `json:"bytes,omitempty"`
	AI               float64 `json:"ai,omitempty"`
	PeakFLOPS        float64 `json:"peak_flops,omitempty"`
	// AttainableFLOPS is the roofline: min(peak, AI x bandwidth).
	AttainableFLOPS float64 `json:"attainable_flops,omitempty"`
	RidgePoint      float64 `json:"ridge_point,omitempty"`
	Bound           string  `json:"bound,omitempty"`
	RooflineTimeS   float64 `json:"roofline_time_s,omitempty"`
	// Predicted* come from the GPU's profile (roofline.OpSeconds with the
	// profile's GEMM efficiency for the compute precision).
	PredictedTimeS     float64        `json:"predicted_time_s,omitempty"`
	PredictedFLOPS     float64        `json:"predicted_flops,omitempty"`
	PredictedBandwidth float64        `json:"predicted_bandwidth,omitempty"`
	ProfileCalibrated  bool           `json:"profile_calibrated"`
	Measured           *measuredPoint `json:"measured,omitempty"`
	// PredictedKernel says which kernel the prediction prices: the GEMM
	// the agent times (pre-quantised operands for fp8, int8 and fp4;
	// weight-only int4 dequantised in the main loop), never vLLM's
	// serving path with its activation quantisation, which is
	// ServingTimeS.
	PredictedKernel string `json:"predicted_kernel,omitempty"`
	// ServingTimeS is, for a precision whose activations are quantised,
	// the same GEMM as vLLM serves it (W8A8: 16-bit activations
	// quantised per token, then the GEMM; roofline.InputsDynamic), and
	// ServingKernel names it. Not comparable with the agent's timing.
	ServingTimeS  float64 `json:"serving_time_s,omitempty"`
	ServingKernel string  `json:"serving_kernel,omitempty"`
}

// measuredPoint is the agent's timing of the same GEMM. ErrorPct is
// (predicted - measured) / measured x 100: positive means the model
// predicts slower than measured.
type measuredPoint struct {
	Status            string  `json:"status"` // "ok", "unsupported" or "error"
	Reason            string  `json:"reason,omitempty"`
	TimeS             float64 `json:"time_s,omitempty"`
	AchievedFLOPS     float64 `json:"achieved_flops,omitempty"`
	AchievedBandwidth float64 `json:"achieved_bandwidth,omitempty"`
	ErrorPct          num     `json:"error_pct,omitempty"`
	Device            string  `json:"device,omitempty"`
	Kernel            string  `json:"kernel,omitempty"`
}

// predictSpot prices C[m,n] = A[m,k] W[n,k]^T in precision p on g: the
// roofline bound and the profile's predicted time. m == 1 is a GEMV, as
// in `sim roofline op gemv`.
func predictSpot(g *hardware.GPU, p spotPrecision, m, n, k int) spotPoint {
	pt := spotPoint{Precision: p.Name, M: m, N: n, K: k, ProfileCalibrated: g.EffectiveProfile().Calibrated}
	w, err := roofline.LookupPrecision(p.Weight)
	if err != nil {
		pt.Status, pt.Reason = "unsupported", err.Error()
		return pt
	}
	act, err := roofline.LookupPrecision(p.Act)
	if err != nil {
		pt.Status, pt.Reason = "unsupported", err.Error()
		return pt
	}
	var c roofline.Cost
	if m == 1 {
		c = roofline.GEMV(n, k, w, act)
	} else {
		c = roofline.GEMM(m, n, k, w, act)
	}
	c.ComputePrecision = roofline.ComputePrecision(w, act, g)
	peak, ok := g.PeakFLOPS(c.ComputePrecision)
	if !ok {
		pt.Status = "unsupported"
		pt.Reason = fmt.Sprintf("%s has no %s peak in the catalog (no native %s tensor cores)", g.Name, c.ComputePrecision, c.ComputePrecision)
		return pt
	}
	bw := g.BandwidthBytesPerSec()
	a := roofline.Analyze(c, peak, bw)
	prof := g.EffectiveProfile()
	eff := prof.GEMMFor(c.ComputePrecision)
	pt.PredictedKernel = fmt.Sprintf("%s GEMM, %s weights and activations", c.ComputePrecision, p.Name)
	if !roofline.QuantizedActivations(act) && w.Compute == "" {
		pt.PredictedKernel = fmt.Sprintf("weight-only %s GEMM (W4A16: weights dequantised to %s in the main loop)", p.Name, act.Name)
	}
	if roofline.QuantizedActivations(act) {
		// The agent feeds operands already in the format; the profile's
		// curve for this compute precision was fitted to vLLM's layer,
		// which quantises its 16-bit input first.
		wide, _ := roofline.LookupPrecision(roofline.DefaultActDType(g))
		single := prof.GEMMFor(wide.Compute)
		pt.PredictedKernel = fmt.Sprintf("%s GEMM on pre-quantised operands (as the agent times it): the profile's %s curve without its activation-quantisation terms",
			c.ComputePrecision, c.ComputePrecision)
		sc := c
		if m == 1 {
			sc = roofline.GEMV(n, k, w, wide)
		} else {
			sc = roofline.GEMM(m, n, k, w, wide)
		}
		sc.ComputePrecision = c.ComputePrecision
		pt.ServingTimeS = roofline.OpSeconds(sc, eff, peak, bw)
		pt.ServingKernel = fmt.Sprintf("vLLM serving path: %s activations quantised per token, then the %s GEMM (W8A8 style)", wide.Name, c.ComputePrecision)
		eff = roofline.PrequantizedEfficiency(eff, single)
	}
	t := roofline.OpSeconds(c, eff, peak, bw)
	pt.Status = "ok"
	pt.ComputePrecision = c.ComputePrecision
	pt.FLOPs, pt.Bytes, pt.AI = a.FLOPs, a.Bytes, a.ArithmeticIntensity
	pt.PeakFLOPS, pt.AttainableFLOPS, pt.RidgePoint, pt.Bound = peak, a.AttainableFLOPS, a.RidgePoint, a.Bound
	pt.RooflineTimeS = a.TimeS
	pt.PredictedTimeS = t
	if t > 0 {
		pt.PredictedFLOPS, pt.PredictedBandwidth = a.FLOPs/t, a.Bytes/t
	}
	return pt
}

// withMeasured attaches a measured time to a predicted point.
func (pt *spotPoint) withMeasured(timeS float64, device, kernel string) {
	mp := &measuredPoint{Status: "ok", TimeS: timeS, Device: device, Kernel: kernel}
	mp.AchievedFLOPS = pt.FLOPs / timeS
	mp.AchievedBandwidth = pt.Bytes / timeS
	mp.ErrorPct = num((pt.PredictedTimeS - timeS) / timeS * 100)
	pt.Measured = mp
}

const maxSpotDim = 1 << 20

type spotResponse struct {
	GPU    gpuInfo     `json:"gpu"`
	Points []spotPoint `json:"points"`
	Agent  *AgentInfo  `json:"agent,omitempty"`
}

func (s *Server) handleSpotCheck(r *http.Request) (any, error) {
	var req spotRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"m", req.M}, {"n", req.N}, {"k", req.K}} {
		if d.v < 1 || d.v > maxSpotDim {
			return nil, errorf(http.StatusBadRequest, "%s: must be in [1, %d], got %d", d.name, maxSpotDim, d.v)
		}
	}
	if len(req.Precisions) == 0 {
		return nil, errorf(http.StatusBadRequest, "precisions: give at least one of fp16, bf16, fp8, nvfp4, mxfp4, int8, int4")
	}
	if req.Measure && s.agent == nil {
		return nil, errorf(http.StatusBadRequest, "measure: the server was started without --measure-url")
	}
	g, err := req.resolve()
	if err != nil {
		return nil, err
	}
	known := map[string]spotPrecision{}
	var names []string
	for _, p := range spotPrecisions(g) {
		known[p.Name] = p
		names = append(names, p.Name)
	}
	seen := map[string]bool{}
	res := spotResponse{GPU: describeGPU(g)}
	for i, name := range req.Precisions {
		p, ok := known[strings.ToLower(name)]
		if !ok {
			return nil, errorf(http.StatusBadRequest, "precisions[%d]: unknown %q (known: %s)", i, name, strings.Join(names, ", "))
		}
		if seen[p.Name] {
			return nil, errorf(http.StatusBadRequest, "precisions[%d]: %s given twice", i, p.Name)
		}
		seen[p.Name] = true
		res.Points = append(res.Points, predictSpot(g, p, req.M, req.N, req.K))
	}
	if req.Measure {
		ctx := r.Context()
		info, err := s.agent.Info(ctx)
		if err != nil {
			return nil, errorf(http.StatusBadGateway, "measure: %v", err)
		}
		res.Agent = info
		s.measure(ctx, res.Points)
	}
	return res, nil
}

// measure asks the agent to time each point, one at a time (the agent's
// GPU runs one measurement at a time anyway). A failed measurement is
// recorded on its point; the others go on.
func (s *Server) measure(ctx context.Context, pts []spotPoint) {
	for i := range pts {
		pt := &pts[i]
		res, err := s.agent.GEMM(ctx, GEMMRequest{M: pt.M, N: pt.N, K: pt.K, Precision: pt.Precision})
		switch {
		case err != nil:
			pt.Measured = &measuredPoint{Status: "error", Reason: err.Error()}
		case res.Status != "ok":
			pt.Measured = &measuredPoint{Status: res.Status, Reason: res.Reason, Device: res.Device}
		case pt.Status != "ok":
			// Measured, but the catalog has no peak to predict it with.
			pt.Measured = &measuredPoint{Status: "ok", TimeS: res.TimeS, Device: res.Device, Kernel: res.Kernel,
				AchievedFLOPS: 2 * float64(pt.M) * float64(pt.N) * float64(pt.K) / res.TimeS, ErrorPct: num(math.NaN())}
		default:
			pt.withMeasured(res.TimeS, res.Device, res.Kernel)
		}
	}
}

// measuredExample is one committed agent run (docs/<gpu>_spotcheck.csv,
// embedded as assets/measured/<gpu>_spotcheck.csv) with the catalog GPU's
// predictions beside each measured point.
type measuredExample struct {
	GPU     gpuInfo     `json:"gpu"`
	Device  string      `json:"device"`
	Torch   string      `json:"torch"`
	Command string      `json:"command"`
	Points  []spotPoint `json:"points"`
	Shapes  []string    `json:"shapes"`
	// Available lists the catalog GPUs that have a committed run.
	Available []string `json:"available"`
}

// measuredGPUs names the catalog GPUs with a committed agent run; the
// first is the default.
func measuredGPUs() []string { return []string{"h200", "h100"} }

// handleMeasuredExample answers GET /api/measured-example[?gpu=h100]: the
// committed run of that GPU (H200 when gpu is empty).
func (s *Server) handleMeasuredExample(r *http.Request) (any, error) {
	have := measuredGPUs()
	name := strings.ToLower(r.URL.Query().Get("gpu"))
	if name == "" {
		name = have[0]
	}
	if !slices.Contains(have, name) {
		return nil, errorf(http.StatusBadRequest, "gpu: no measured example for %q (have: %s)", name, strings.Join(have, ", "))
	}
	data, err := assets.ReadFile("assets/measured/" + name + "_spotcheck.csv")
	if err != nil {
		return nil, err
	}
	g, err := hardware.Lookup(name)
	if err != nil {
		return nil, err
	}
	ex, err := buildMeasuredExample(bytes.NewReader(data), g)
	if err != nil {
		return nil, err
	}
	ex.Command = "python3 tools/gpu-agent/agent.py bench --out " + name + "_spotcheck.csv"
	ex.Available = have
	return ex, nil
}

func buildMeasuredExample(rd io.Reader, g *hardware.GPU) (*measuredExample, error) {
	t, err := table.Open(rd, "measured example", table.Options{
		Required: []string{"shape", "m", "n", "k", "precision", "status", "time_s", "device", "torch", "reason", "kernel"}})
	if err != nil {
		return nil, err
	}
	byName := map[string]spotPrecision{}
	for _, p := range spotPrecisions(g) {
		byName[p.Name] = p
	}
	ex := &measuredExample{GPU: describeGPU(g)}
	seenShape := map[string]bool{}
	for t.Next() {
		m, n, k := t.Int("m"), t.Int("n"), t.Int("k")
		p, ok := byName[t.Str("precision")]
		if !ok {
			t.Failf("precision", "unknown %q", t.Str("precision"))
		}
		ok = t.Str("status") == "ok"
		var tm float64
		if ok {
			tm = t.Positive("time_s")
		}
		if t.Err() != nil {
			break
		}
		ex.Device, ex.Torch = t.Str("device"), t.Str("torch")
		shape := fmt.Sprintf("%s %dx%dx%d", t.Str("shape"), m, n, k)
		if !seenShape[shape] {
			seenShape[shape] = true
			ex.Shapes = append(ex.Shapes, shape)
		}
		pt := predictSpot(g, p, m, n, k)
		if !ok {
			pt.Measured = &measuredPoint{Status: t.Str("status"), Reason: t.Str("reason"), Device: ex.Device}
		} else if pt.Status == "ok" {
			pt.withMeasured(tm, ex.Device, t.Str("kernel"))
		}
		ex.Points = append(ex.Points, pt)
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	if len(ex.Points) == 0 {
		return nil, fmt.Errorf("measured example: no rows")
	}
	return ex, nil
}
