package serving

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

const campaignYAML = `name: c
frontend_latency_us: 100
gemm_input_fused_fraction: 0.5
bench_requests_per_client: 4
`

func TestParseCampaign(t *testing.T) {
	c, err := ParseCampaign([]byte(campaignYAML), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*c, Campaign{Name: "c", FrontendLatencyUS: 100, GEMMInputFusedFraction: 0.5, BenchRequestsPerClient: 4}) {
		t.Errorf("got %+v", c)
	}
	for _, tt := range []struct{ name, yaml, key string }{
		{"missing term", strings.Replace(campaignYAML, "bench_requests_per_client: 4\n", "", 1), "bench_requests_per_client"},
		{"negative latency", strings.Replace(campaignYAML, "us: 100", "us: -1", 1), "frontend_latency_us"},
		{"share above 1", strings.Replace(campaignYAML, "fraction: 0.5", "fraction: 1.5", 1), "gemm_input_fused_fraction"},
		{"k below 1", strings.Replace(campaignYAML, "client: 4", "client: 0.5", 1), "bench_requests_per_client"},
		{"empty name", strings.Replace(campaignYAML, "name: c", "name: ''", 1), "name"},
		{"unknown key", campaignYAML + "burst: 1\n", ""},
		{"release not a release", campaignYAML + "backend_version: latest\n", "backend_version"},
	} {
		_, err := ParseCampaign([]byte(tt.yaml), "c.yaml")
		var ce *CampaignError
		if !errors.As(err, &ce) || ce.Key != tt.key {
			t.Errorf("%s: %v, want a *CampaignError at %q", tt.name, err, tt.key)
		}
	}
	var ce *CampaignError
	if _, err := LoadCampaign("no_such"); !errors.As(err, &ce) || !strings.Contains(ce.Reason, "closed_loop_vllm") {
		t.Errorf("unknown campaign: %v, want a *CampaignError listing the shipped ones", err)
	}
}

// Apply sets the campaign's two terms on a copy of the GPU and nothing else.
func TestCampaignApply(t *testing.T) {
	c := &Campaign{FrontendLatencyUS: 100, GEMMInputFusedFraction: 0.5}
	g, err := hardware.Lookup("b300")
	if err != nil {
		t.Fatal(err)
	}
	before := *g.Profile
	got := c.Apply(g).Profile
	if got.FrontendLatencyUS != 100 || got.GEMMInputFusedFraction != 0.5 || got.StepOverheadUS != before.StepOverheadUS || got.GEMM != before.GEMM {
		t.Errorf("applied profile %+v", got)
	}
	if g.Profile.FrontendLatencyUS != before.FrontendLatencyUS || g.Profile.GEMMInputFusedFraction != before.GEMMInputFusedFraction {
		t.Error("Apply modified its GPU")
	}
}

// The shipped campaign's terms are the ones the GPU profiles fitted on it
// carry for sim run (h100, h200, a100-80gb, l40s), and its k is the
// default: validate serving prices the same with --campaign and without.
func TestShippedCampaignMatchesProfiles(t *testing.T) {
	c, err := LoadCampaign("closed_loop_vllm")
	if err != nil {
		t.Fatal(err)
	}
	if c.BenchRequestsPerClient != DefaultBenchRequestsPerClient {
		t.Errorf("k %g, default %d", c.BenchRequestsPerClient, DefaultBenchRequestsPerClient)
	}
	for _, n := range []string{"h100", "h200", "a100-80gb", "l40s"} {
		g, err := hardware.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		if p := g.Profile; p.FrontendLatencyUS != c.FrontendLatencyUS || p.GEMMInputFusedFraction != c.GEMMInputFusedFraction {
			t.Errorf("%s: frontend %g, fused %g; campaign %g, %g", n, p.FrontendLatencyUS, p.GEMMInputFusedFraction, c.FrontendLatencyUS, c.GEMMInputFusedFraction)
		}
	}
}

// Marshal writes what ParseCampaign reads back.
func TestCampaignRoundTrip(t *testing.T) {
	c, err := LoadCampaign("closed_loop_vllm")
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCampaign(data, "out.yaml")
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Errorf("round trip: %v\n%+v\n%+v", err, back, c)
	}
}
