package serving

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/yamlstrict"
	"go.yaml.in/yaml/v3"
)

// campaignFiles holds the shipped campaign files, campaigns/<name>.yaml.
//
//go:embed campaigns/*.yaml
var campaignFiles embed.FS

// Campaign is the terms of one benchmark campaign: how its rows were
// measured rather than what the engine or the GPU does. Only the serving
// validation uses them (Options.Campaign); `sim run` does not read a
// campaign.
type Campaign struct {
	// Name is the campaign's name ("closed_loop_vllm").
	Name string `yaml:"name" json:"name"`
	// FrontendLatencyUS is the campaign's latency per request before the
	// engine sees it (client, HTTP, tokenisation), µs; it replaces the GPU
	// profile's frontend_latency_us for the campaign's rows.
	FrontendLatencyUS float64 `yaml:"frontend_latency_us" json:"frontend_latency_us"`
	// GEMMInputFusedFraction is the share (0..1) of the GEMMs' input-side
	// cost the campaign's engine removed by fusion; it replaces the GPU
	// profile's gemm_input_fused_fraction for the campaign's rows.
	GEMMInputFusedFraction float64 `yaml:"gemm_input_fused_fraction" json:"gemm_input_fused_fraction"`
	// BenchRequestsPerClient is the benchmark's requests per client, k >= 1:
	// the t = 0 burst weighs 1/k of a row's mean (Prediction.Blend).
	BenchRequestsPerClient float64 `yaml:"bench_requests_per_client" json:"bench_requests_per_client"`
	// BackendVersion is the engine release the campaign ran where a row's
	// backend_version is empty ("0.12.0"; the data's README says which);
	// "" leaves such rows on the GPU profile's release.
	BackendVersion string `yaml:"backend_version,omitempty" json:"backend_version,omitempty"`
	// Provenance is the fit that produced the terms.
	Provenance hardware.Provenance `yaml:"provenance,omitempty" json:"provenance,omitempty"`
}

// CampaignError is a campaign file or value that is not valid: Key names
// the field ("" for the file as a whole).
type CampaignError struct {
	Origin, Key, Reason string
}

func (e *CampaignError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("campaign %s: %s", e.Origin, e.Reason)
	}
	return fmt.Sprintf("campaign %s: %s: %s", e.Origin, e.Key, e.Reason)
}

// ParseCampaign reads a campaign file strictly (unknown keys and wrong
// types are errors) and validates it: every term is required, the latency
// is finite and >= 0, the fused share in [0, 1], k >= 1.
func ParseCampaign(data []byte, origin string) (*Campaign, error) {
	var c Campaign
	root, err := yamlstrict.Decode(data, &c)
	if err != nil {
		return nil, &CampaignError{Origin: origin, Reason: err.Error()}
	}
	keys := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys[root.Content[i].Value] = true
	}
	for _, k := range []string{"name", "frontend_latency_us", "gemm_input_fused_fraction", "bench_requests_per_client"} {
		if !keys[k] {
			return nil, &CampaignError{Origin: origin, Key: k, Reason: "required key missing"}
		}
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		return nil, &CampaignError{Origin: origin, Key: "name", Reason: "must not be empty"}
	case !(c.FrontendLatencyUS >= 0) || math.IsInf(c.FrontendLatencyUS, 0):
		return nil, &CampaignError{Origin: origin, Key: "frontend_latency_us", Reason: fmt.Sprintf("must be a finite number >= 0, got %g", c.FrontendLatencyUS)}
	case !(c.GEMMInputFusedFraction >= 0 && c.GEMMInputFusedFraction <= 1):
		return nil, &CampaignError{Origin: origin, Key: "gemm_input_fused_fraction", Reason: fmt.Sprintf("must be in [0, 1], got %g", c.GEMMInputFusedFraction)}
	case !(c.BenchRequestsPerClient >= 1) || math.IsInf(c.BenchRequestsPerClient, 0):
		return nil, &CampaignError{Origin: origin, Key: "bench_requests_per_client", Reason: fmt.Sprintf("must be a finite number >= 1, got %g", c.BenchRequestsPerClient)}
	}
	if c.BackendVersion != "" {
		if _, err := engine.ResolveRelease(engine.VLLM, c.BackendVersion); err != nil {
			return nil, &CampaignError{Origin: origin, Key: "backend_version", Reason: err.Error()}
		}
	}
	return &c, nil
}

// Campaigns lists the shipped campaigns' names, sorted.
func Campaigns() []string {
	entries, err := fs.ReadDir(campaignFiles, "campaigns")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	sort.Strings(names)
	return names
}

// LoadCampaign reads a campaign: a shipped one by name
// ("closed_loop_vllm"), or a YAML file by path (a name ending in .yaml or
// .yml). An unknown name is a *CampaignError listing the shipped ones.
func LoadCampaign(name string) (*Campaign, error) {
	if ext := path.Ext(name); ext == ".yaml" || ext == ".yml" {
		data, err := safefile.ReadFile(name, safefile.Config)
		if err != nil {
			return nil, fmt.Errorf("reading campaign: %w", err)
		}
		return ParseCampaign(data, name)
	}
	data, err := campaignFiles.ReadFile("campaigns/" + name + ".yaml")
	if errors.Is(err, fs.ErrNotExist) || strings.ContainsAny(name, "/\\") {
		return nil, &CampaignError{Origin: name, Reason: fmt.Sprintf("unknown campaign (shipped: %s; or a .yaml file)", strings.Join(Campaigns(), ", "))}
	}
	if err != nil {
		return nil, err
	}
	return ParseCampaign(data, name)
}

// Apply returns a copy of g whose profile has the campaign's front-end
// latency and fused GEMM-input share; g is not modified.
func (c *Campaign) Apply(g *hardware.GPU) *hardware.GPU {
	out := g.Clone()
	p := out.EffectiveProfile().Clone()
	p.FrontendLatencyUS = c.FrontendLatencyUS
	p.GEMMInputFusedFraction = c.GEMMInputFusedFraction
	out.Profile = p
	return out
}

// Marshal writes c as a campaign file that ParseCampaign reads back.
func (c *Campaign) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Benchmark campaign terms written by `sim calibrate serving --campaign-out`; read by sim validate serving --campaign.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encoding campaign: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding campaign: %w", err)
	}
	return buf.Bytes(), nil
}
