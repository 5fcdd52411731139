package serve

import (
	"net/http"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// gpuRef names a GPU in a request: a catalog name, or an uploaded GPU YAML
// (the schema of docs/gpu-schema.md), which wins when both are given.
// Names are looked up in the catalog only: unlike the CLI's --gpu, a name
// is never read as a file path.
type gpuRef struct {
	GPU     string `json:"gpu"`
	GPUYAML string `json:"gpu_yaml"`
}

func (g gpuRef) resolve() (*hardware.GPU, error) {
	if strings.TrimSpace(g.GPUYAML) != "" {
		gpu, err := hardware.ParseGPU([]byte(g.GPUYAML), "uploaded GPU YAML")
		if err != nil {
			return nil, badRequest(err)
		}
		return gpu, nil
	}
	if strings.TrimSpace(g.GPU) == "" {
		return nil, errorf(http.StatusBadRequest, "gpu: required (a catalog name or gpu_yaml)")
	}
	gpu, err := hardware.Lookup(g.GPU)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "gpu: %v", err)
	}
	return gpu.Clone(), nil
}

// lookupModel resolves a catalog model name (never a path).
func lookupModel(name string) (*model.Config, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errorf(http.StatusBadRequest, "model: required")
	}
	m, err := model.Lookup(name)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "model: %v", err)
	}
	return m, nil
}

type gpuEntry struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	PeakTFLOPS  map[string]float64 `json:"peak_tflops"`
	BandwidthGB float64            `json:"memory_bandwidth_gbps"`
	MemoryGiB   float64            `json:"memory_gib"`
	Calibrated  bool               `json:"calibrated"`
}

func (s *Server) handleGPUs(*http.Request) (any, error) {
	var out []gpuEntry
	for _, g := range hardware.List() {
		out = append(out, gpuEntry{Name: g.Name, Description: g.Description, PeakTFLOPS: g.PeakTFLOPS,
			BandwidthGB: g.MemoryBandwidthGBps, MemoryGiB: g.MemoryGiB, Calibrated: g.EffectiveProfile().Calibrated})
	}
	return out, nil
}

type modelEntry struct {
	Name   string  `json:"name"`
	Family string  `json:"family,omitempty"`
	Params float64 `json:"params"`
	MoE    bool    `json:"moe"`
}

func (s *Server) handleModels(*http.Request) (any, error) {
	var out []modelEntry
	for _, m := range model.List() {
		out = append(out, modelEntry{Name: m.Name, Family: m.Family, Params: m.Params().Total, MoE: m.MoE != nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
