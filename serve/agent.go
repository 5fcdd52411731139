package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AgentProtocol is the version of the measurement agent's JSON protocol
// this client speaks (documented in docs/web.md; the reference agent is
// tools/gpu-agent/agent.py).
const AgentProtocol = 1

// maxAgentAnswer caps an agent's answer.
const maxAgentAnswer = 1 << 20

// AgentClient talks to a measurement agent: GET /v1/info, POST /v1/gemm.
type AgentClient struct {
	// BaseURL is the agent's root, e.g. http://127.0.0.1:8765.
	BaseURL string
	// HTTP carries the requests; its Timeout bounds each one.
	HTTP *http.Client
}

// AgentInfo is the answer to GET /v1/info.
type AgentInfo struct {
	Protocol          int                       `json:"protocol"`
	Agent             string                    `json:"agent"`
	Version           string                    `json:"version"`
	Device            string                    `json:"device"`
	ComputeCapability string                    `json:"compute_capability"`
	Torch             string                    `json:"torch"`
	CUDA              string                    `json:"cuda"`
	Precisions        map[string]AgentPrecision `json:"precisions"`
}

// AgentPrecision says whether the agent's device runs a precision.
type AgentPrecision struct {
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// GEMMRequest asks the agent to time C[m,n] = A[m,k] W[n,k]^T.
type GEMMRequest struct {
	M         int    `json:"m"`
	N         int    `json:"n"`
	K         int    `json:"k"`
	Precision string `json:"precision"`
	Warmup    int    `json:"warmup,omitempty"`
	Repeats   int    `json:"repeats,omitempty"`
}

// GEMMResult is the agent's answer: Status "ok" with TimeS (the median
// seconds per launch) or "unsupported" with Reason.
type GEMMResult struct {
	Protocol  int     `json:"protocol"`
	M         int     `json:"m"`
	N         int     `json:"n"`
	K         int     `json:"k"`
	Precision string  `json:"precision"`
	Device    string  `json:"device"`
	Status    string  `json:"status"`
	Reason    string  `json:"reason,omitempty"`
	Kernel    string  `json:"kernel,omitempty"`
	TimeS     float64 `json:"time_s,omitempty"`
	MinS      float64 `json:"min_s,omitempty"`
	MaxS      float64 `json:"max_s,omitempty"`
	Repeats   int     `json:"repeats,omitempty"`
}

// Info asks the agent what it is and what it supports.
func (c *AgentClient) Info(ctx context.Context) (*AgentInfo, error) {
	var info AgentInfo
	if err := c.do(ctx, http.MethodGet, "/v1/info", nil, &info); err != nil {
		return nil, err
	}
	if info.Protocol != AgentProtocol {
		return nil, fmt.Errorf("agent: protocol %d, want %d", info.Protocol, AgentProtocol)
	}
	return &info, nil
}

// GEMM times one GEMM. An "unsupported" answer is a result, not an error.
func (c *AgentClient) GEMM(ctx context.Context, req GEMMRequest) (*GEMMResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var res GEMMResult
	if err := c.do(ctx, http.MethodPost, "/v1/gemm", body, &res); err != nil {
		return nil, err
	}
	switch {
	case res.Protocol != AgentProtocol:
		return nil, fmt.Errorf("agent: protocol %d, want %d", res.Protocol, AgentProtocol)
	case res.Status == "ok" && !(res.TimeS > 0):
		return nil, fmt.Errorf("agent: status ok but time_s %g is not > 0", res.TimeS)
	case res.Status != "ok" && res.Status != "unsupported":
		return nil, fmt.Errorf("agent: unknown status %q", res.Status)
	case res.M != req.M || res.N != req.N || res.K != req.K || res.Precision != req.Precision:
		return nil, fmt.Errorf("agent: answered %s %dx%dx%d for %s %dx%dx%d",
			res.Precision, res.M, res.N, res.K, req.Precision, req.M, req.N, req.K)
	}
	return &res, nil
}

func (c *AgentClient) do(ctx context.Context, method, path string, body []byte, dst any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentAnswer+1))
	if err != nil {
		return fmt.Errorf("agent: reading the answer: %w", err)
	}
	if len(data) > maxAgentAnswer {
		return fmt.Errorf("agent: answer larger than %d bytes", maxAgentAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("agent: %s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("agent: %s", resp.Status)
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("agent: bad answer: %w", err)
	}
	return nil
}
