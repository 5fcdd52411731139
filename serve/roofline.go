package serve

import (
	"net/http"
	"sort"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/roofline"
)

// rooflineRequest asks for a GPU's roofline and, with a model, the model's
// prefill and decode phases on it (roofline.Phases: Batch sequences of
// Prompt new tokens over Depth cached ones, then Gen decode steps).
type rooflineRequest struct {
	gpuRef
	Model   string `json:"model"`
	TP      int    `json:"tp"`
	Weights string `json:"weights"`
	Prompt  int    `json:"prompt"`
	Gen     int    `json:"gen"`
	Batch   int    `json:"batch"`
	Depth   int    `json:"depth"`
}

// gpuInfo describes the GPU a chart is drawn for.
type gpuInfo struct {
	Name          string  `json:"name"`
	Description   string  `json:"description"`
	Calibrated    bool    `json:"calibrated"`
	ProfileSource string  `json:"profile_source"`
	BandwidthBps  float64 `json:"bandwidth_bytes_per_s"`
	L2MiB         float64 `json:"l2_mib,omitempty"`
}

func describeGPU(g *hardware.GPU) gpuInfo {
	p := g.EffectiveProfile()
	return gpuInfo{Name: g.Name, Description: g.Description, Calibrated: p.Calibrated,
		ProfileSource: p.Summary(), BandwidthBps: g.BandwidthBytesPerSec(), L2MiB: g.L2MiB}
}

// ceiling is one precision's compute roof. The calibrated ("attainable")
// roofs scale the peaks by the profile's asymptotic efficiencies: the GEMM
// compute curve's Max for that precision and the GEMM memory curve's Max.
type ceiling struct {
	Precision       string  `json:"precision"`
	PeakFLOPS       float64 `json:"peak_flops"`
	CalibratedFLOPS float64 `json:"calibrated_flops"`
	RidgePeak       float64 `json:"ridge_peak"`
	RidgeCalibrated float64 `json:"ridge_calibrated"`
}

type memoryRoof struct {
	PeakBps       float64 `json:"peak_bytes_per_s"`
	CalibratedBps float64 `json:"calibrated_bytes_per_s"`
}

// phasePoint is one phase of the model, placed on the roofline at its
// arithmetic intensity and the FLOP rate the step model predicts for it.
type phasePoint struct {
	Phase         string  `json:"phase"`
	Name          string  `json:"name"`
	AI            float64 `json:"ai"`
	FLOPs         float64 `json:"flops"`
	Bytes         float64 `json:"bytes"`
	TimeS         float64 `json:"time_s"`
	AchievedFLOPS float64 `json:"achieved_flops"`
	Attainable    float64 `json:"attainable_flops"`
	Bound         string  `json:"bound"`
	TokensPerS    float64 `json:"tokens_per_s"`
	RooflineTimeS float64 `json:"roofline_time_s"`
}

type rooflineResponse struct {
	GPU      gpuInfo      `json:"gpu"`
	Memory   memoryRoof   `json:"memory"`
	Ceilings []ceiling    `json:"ceilings"`
	Phases   []phasePoint `json:"phases,omitempty"`
	Model    string       `json:"model,omitempty"`
}

func rooflineOf(g *hardware.GPU) rooflineResponse {
	p := g.EffectiveProfile()
	bw := g.BandwidthBytesPerSec()
	res := rooflineResponse{GPU: describeGPU(g)}
	res.Memory = memoryRoof{PeakBps: bw, CalibratedBps: bw * p.GEMM.Memory.Max}
	for prec, t := range g.PeakTFLOPS {
		if t <= 0 {
			continue
		}
		peak := t * 1e12
		cal := peak * p.GEMMFor(prec).Compute.Max
		c := ceiling{Precision: prec, PeakFLOPS: peak, CalibratedFLOPS: cal, RidgePeak: peak / bw}
		if res.Memory.CalibratedBps > 0 {
			c.RidgeCalibrated = cal / res.Memory.CalibratedBps
		}
		res.Ceilings = append(res.Ceilings, c)
	}
	sort.Slice(res.Ceilings, func(i, j int) bool {
		a, b := res.Ceilings[i], res.Ceilings[j]
		if a.PeakFLOPS != b.PeakFLOPS {
			return a.PeakFLOPS > b.PeakFLOPS
		}
		return a.Precision < b.Precision
	})
	return res
}

func (s *Server) handleRoofline(r *http.Request) (any, error) {
	var req rooflineRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	g, err := req.resolve()
	if err != nil {
		return nil, err
	}
	res := rooflineOf(g)
	if req.Model == "" {
		return res, nil
	}
	m, err := lookupModel(req.Model)
	if err != nil {
		return nil, err
	}
	if req.TP == 0 {
		req.TP = 1
	}
	if req.Batch == 0 {
		req.Batch = 1
	}
	const maxPhaseTokens = 1 << 20
	if req.Prompt > maxPhaseTokens || req.Gen > 65536 || req.Batch > 4096 || req.Depth > maxPhaseTokens {
		return nil, errorf(http.StatusBadRequest, "phase: prompt and depth must be <= %d, gen <= 65536, batch <= 4096", maxPhaseTokens)
	}
	if err := limits.IntIn(req.TP, 1, limits.MaxTP); err != nil {
		return nil, errorf(http.StatusBadRequest, "tp: %v", err)
	}
	sm, err := roofline.NewStepModel(m, g, roofline.StepOptions{TP: req.TP, WeightDType: req.Weights})
	if err != nil {
		return nil, badRequest(err)
	}
	phases, err := roofline.Phases(sm, roofline.PhaseRequest{Prompt: req.Prompt, Gen: req.Gen, Batch: req.Batch, Depth: req.Depth})
	if err != nil {
		return nil, badRequest(err)
	}
	res.Model = m.Name
	for _, ph := range phases {
		pt := phasePoint{Phase: ph.Phase, Name: ph.Name, AI: ph.ArithmeticIntensity, FLOPs: ph.FLOPs, Bytes: ph.Bytes,
			TimeS: ph.TimeS, Attainable: ph.AttainableFLOPS, Bound: ph.Bound, TokensPerS: ph.TokensPerS,
			RooflineTimeS: ph.RooflineTimeS}
		if ph.TimeS > 0 {
			pt.AchievedFLOPS = ph.FLOPs / ph.TimeS
		}
		res.Phases = append(res.Phases, pt)
	}
	return res, nil
}
