package pipeline

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// RecordSchemaVersion is the version of run.json's schema (Record;
// docs/results.md). It changes when a key is renamed or removed or changes
// meaning; adding a key keeps it. The summary carries its own version
// (traces.ResultSchemaVersion).
const RecordSchemaVersion = 1

// Kind says what made a run.json.
type Kind string

// The kinds of run.json.
const (
	// KindSimulated is a run of the simulator (`sim run --out`, the web view).
	KindSimulated Kind = "simulated"
	// KindObserved is a run against a real server (`sim observe`).
	KindObserved Kind = "observed"
)

// Record is run.json: what a run was (its settings), what it gave (the
// result and the counters) and, for an observed run, the client's side.
// `sim run --out`, the web view's downloads and `sim observe --out` write
// it; `sim compare`, `sim plot run` and `sim calibrate serving --observed`
// read it. Keys of the other kind are omitted.
type Record struct {
	SchemaVersion int  `json:"schema_version"`
	Kind          Kind `json:"kind"`
	// RunID identifies the run; a simulated run's is derived from its
	// settings and the version (RunID), so identical runs carry identical
	// ids.
	RunID string `json:"run_id"`
	// Version is roofsim's version.
	Version string `json:"version"`
	// Command and Started (RFC 3339, UTC) are an observed run's command
	// line and start.
	Command string `json:"command,omitempty"`
	Started string `json:"started,omitempty"`
	// Config is the deployment and the run's settings.
	Config Settings `json:"config"`
	// MaxRequests is the cap on generated requests that cut the workload
	// short (the web view); 0 when none did.
	MaxRequests int `json:"max_requests,omitempty"`
	// KV is the derived KV-cache sizing of a simulated run (zero when
	// num_gpu_blocks was pinned).
	KV *sim.Capacity `json:"kv_capacity,omitempty"`
	// Endpoint, Client and Result are an observed run's server facts,
	// client settings and client-side counts (the observe package's types).
	Endpoint any `json:"endpoint,omitempty"`
	Client   any `json:"client,omitempty"`
	Result   any `json:"result,omitempty"`
	// Workload is the resolved workload spec of an observed run.
	Workload *workload.Spec `json:"workload,omitempty"`
	// Files names the run's files by role ("requests": "requests.csv").
	Files map[string]string `json:"files,omitempty"`
	// Notes are remarks on the run's input (an inference-perf config's
	// conversion notes).
	Notes []string `json:"notes,omitempty"`
	// Summary is the result in vllm bench serve's schema (docs/results.md).
	Summary *traces.Result `json:"summary"`
	// Counters are the run's totals.
	Counters Counters `json:"counters"`
}

// Counters are a run's totals in run.json: the engine's (sim.Counters; an
// observed run has no engine counts) and the requests an observed run left
// unsent.
type Counters struct {
	sim.Counters
	Unsent int64 `json:"unsent,omitempty"`
}

// Record is the run.json of the plan's run o, by roofsim version version.
func (p *Plan) Record(o *Outcome, version string) Record {
	kv := p.Prepared.Capacity
	return Record{SchemaVersion: RecordSchemaVersion, Kind: KindSimulated, RunID: p.RunID(version), Version: version,
		Config: p.Settings, KV: &kv, Summary: o.Result, Counters: Counters{Counters: o.Sim.Counters()}, Notes: p.Spec.Notes}
}

// RunID is a UUID derived from the plan's settings and version, so
// identical runs carry identical ids (outputs stay byte-for-byte
// reproducible).
func (p *Plan) RunID(version string) string {
	text := fmt.Sprintf("%+v|%s", p.Settings, version)
	if p.Settings.Disaggregation == (settings.Disaggregation{}) {
		// Without disaggregation the id is the one the same run had before
		// the setting existed.
		text = strings.Replace(text, fmt.Sprintf(" Disaggregation:%+v", settings.Disaggregation{}), "", 1)
	}
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(text)).String()
}
