package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/roofsim/roofsim/internal/safefile"
)

// EngineConfig is what a per-step table's engine ran with, from the
// effective_vllm_config.json written beside it.
type EngineConfig struct {
	// Path is the file read ("" when there was none).
	Path string
	// Version is the vLLM version ("" when unknown).
	Version string
	// TP is the tensor-parallel size (0 when unknown).
	TP int
	// MaxNumSeqs is scheduler_config.max_num_seqs (0 when unknown).
	MaxNumSeqs int
	// CUDAGraphMode is compilation_config.cudagraph_mode ("" when unknown).
	CUDAGraphMode string
}

// GraphCaptureMaxTokens is vLLM's default largest CUDA-graph capture size,
// min(2 max_num_seqs, 512), or 0 when graphs are off or max_num_seqs is
// unknown.
func (c EngineConfig) GraphCaptureMaxTokens() int {
	if c.MaxNumSeqs <= 0 || c.CUDAGraphMode == "NONE" {
		return 0
	}
	return min(2*c.MaxNumSeqs, 512)
}

// EngineConfigFile is the name of the engine settings file beside a table.
const EngineConfigFile = "effective_vllm_config.json"

// ReadEngineConfig reads EngineConfigFile from the directory of the table
// at tablePath. A missing file gives the zero EngineConfig and no error.
func ReadEngineConfig(tablePath string) (EngineConfig, error) {
	path := filepath.Join(filepath.Dir(tablePath), EngineConfigFile)
	data, err := safefile.ReadFile(path, safefile.Config)
	if errors.Is(err, fs.ErrNotExist) {
		return EngineConfig{}, nil
	}
	if err != nil {
		return EngineConfig{}, err
	}
	var raw struct {
		Version    string  `json:"vllm_version"`
		TP         *int    `json:"parallel_config.tensor_parallel_size"`
		MaxNumSeqs *int    `json:"scheduler_config.max_num_seqs"`
		GraphMode  *string `json:"compilation_config.cudagraph_mode"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return EngineConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	c := EngineConfig{Path: path, Version: raw.Version}
	if raw.TP != nil {
		c.TP = *raw.TP
	}
	if raw.MaxNumSeqs != nil {
		c.MaxNumSeqs = *raw.MaxNumSeqs
	}
	if raw.GraphMode != nil {
		c.CUDAGraphMode = *raw.GraphMode
	}
	return c, nil
}
