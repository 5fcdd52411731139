// Package observed fits the engine cost terms of a GPU profile to runs
// recorded by `sim observe` against a real server, keeping the profile's
// kernel efficiencies fixed: only the terms that kernels cannot show
// (per-step and per-request engine work, the API front end, ...) move.
//
// The fit replays every observed run in the simulator, request for request
// (the observed send times, the token counts the server reported, the
// workload's shared-prefix segments), and minimises the squared log error
// of each request's TTFT and TPOT. Reading order: Run and LoadRun (what an
// observed run is), Terms (the engine terms and how they are bounded), Fit
// (the fit, its identifiability checks and the leave-one-run-out error).
package observed

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Request is one completed observed request, as the fit replays it.
type Request struct {
	ID       uint64
	ArrivalS float64 // when it was sent, s since the run start
	Prompt   int     // prompt tokens (server-reported)
	Output   int     // output tokens (server-reported)
	TTFTms   float64
	TPOTms   float64 // NaN when Output <= 1
	// Segments are the workload's shared-content runs at the prompt's start
	// (shared system prompts, session history); nil when unknown.
	Segments []workload.Segment
}

// Run is one observed run.
type Run struct {
	// Name identifies the run in reports (its directory).
	Name string
	// File is the requests file the run was read from ("" when it was
	// built from records in memory).
	File string
	// Deployment is the served configuration the run was made against
	// (run.json's "config", over workload.DefaultDeployment).
	Deployment workload.Deployment
	// Requests are the completed requests, by arrival.
	Requests []Request
	// Failed counts requests that did not complete (not replayed).
	Failed int
}

// segment is a workload.Segment in requests_detail.jsonl.
type segment struct {
	Key    uint64 `json:"key"`
	Tokens int    `json:"tokens"`
}

// detailLine is the part of a requests_detail.jsonl line the fit reads.
type detailLine struct {
	ID       uint64    `json:"id"`
	Segments []segment `json:"segments"`
}

// LoadRun reads an observed (or simulated) run directory: run.json for the
// deployment, requests.csv, .jsonl or .parquet for the requests, and
// requests_detail.jsonl, when present, for their shared-prefix segments.
func LoadRun(dir string) (*Run, error) {
	wrap := func(err error) error { return fmt.Errorf("observed run %q: %w", dir, err) }
	raw, err := safefile.ReadFile(filepath.Join(dir, "run.json"), safefile.Result)
	if err != nil {
		return nil, wrap(err)
	}
	var meta struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, wrap(fmt.Errorf("run.json: %v", err))
	}
	if len(meta.Config) == 0 {
		return nil, wrap(errors.New("run.json: no \"config\" object (the deployment the run was made against)"))
	}
	dep := workload.DefaultDeployment()
	if err := json.Unmarshal(meta.Config, &dep); err != nil {
		return nil, wrap(fmt.Errorf("run.json: config: %v", err))
	}
	var recs []traces.RequestRecord
	found := ""
	for _, ext := range []string{"csv", "jsonl", "parquet"} {
		p := filepath.Join(dir, "requests."+ext)
		if _, err := os.Stat(p); err == nil {
			if recs, err = traces.ReadRequestsFile(p); err != nil {
				return nil, wrap(err)
			}
			found = p
			break
		}
	}
	if found == "" {
		return nil, wrap(errors.New("no requests.csv, requests.jsonl or requests.parquet"))
	}
	segs, err := readSegments(filepath.Join(dir, "requests_detail.jsonl"))
	if err != nil {
		return nil, wrap(err)
	}
	r := FromRecords(filepath.Base(filepath.Clean(dir)), dep, recs, segs)
	if len(r.Requests) == 0 {
		return nil, wrap(fmt.Errorf("%s: no completed requests", filepath.Base(found)))
	}
	r.File = found
	return r, nil
}

// DuplicateRunError is LoadRuns' refusal of a directory given twice (by the
// same path or by two paths to the same directory): the leave-one-run-out
// error would then test a run on itself.
type DuplicateRunError struct {
	Dir, Same string // the later path and the earlier one it names again
}

func (e *DuplicateRunError) Error() string {
	if filepath.Clean(e.Dir) == filepath.Clean(e.Same) {
		return fmt.Sprintf("observed run %q given twice", e.Dir)
	}
	return fmt.Sprintf("observed run %q given twice (%q is the same directory)", e.Dir, e.Same)
}

// LoadRuns reads the run directories dirs (LoadRun), refusing a directory
// given twice with a *DuplicateRunError before reading any.
func LoadRuns(dirs []string) ([]*Run, error) {
	seen := make([]os.FileInfo, 0, len(dirs))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("observed run %q: %w", d, err)
		}
		for j, prev := range seen {
			if os.SameFile(prev, st) {
				return nil, &DuplicateRunError{Dir: d, Same: dirs[j]}
			}
		}
		seen = append(seen, st)
	}
	runs := make([]*Run, 0, len(dirs))
	for _, d := range dirs {
		r, err := LoadRun(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// readSegments reads the segments of each request id; an absent file gives
// an empty map.
func readSegments(path string) (map[uint64][]workload.Segment, error) {
	f, err := safefile.Open(path, safefile.Trace)
	if errors.Is(err, os.ErrNotExist) {
		return map[uint64][]workload.Segment{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[uint64][]workload.Segment{}
	sc := bufio.NewScanner(safefile.SkipBOM(f))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var d detailLine
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", filepath.Base(path), line, err)
		}
		for _, s := range d.Segments {
			out[d.ID] = append(out[d.ID], workload.Segment{Key: s.Key, Tokens: s.Tokens})
		}
	}
	return out, sc.Err()
}

// FromRecords builds a Run from request records; segs (may be nil) gives
// shared-prefix segments by request id. Records that did not complete, or
// lack a finite TTFT, count as failed.
func FromRecords(name string, dep workload.Deployment, recs []traces.RequestRecord, segs map[uint64][]workload.Segment) *Run {
	r := &Run{Name: name, Deployment: dep}
	for _, rec := range recs {
		if rec.Status != traces.StatusOK || !finite(rec.TTFTms) || !finite(rec.ArrivalS) || rec.PromptTokens < 1 || rec.OutputTokens < 1 {
			r.Failed++
			continue
		}
		q := Request{ID: rec.ID, ArrivalS: rec.ArrivalS, Prompt: rec.PromptTokens, Output: rec.OutputTokens,
			TTFTms: rec.TTFTms, TPOTms: rec.TPOTms, Segments: segs[rec.ID]}
		if q.Output <= 1 {
			q.TPOTms = math.NaN()
		}
		// A segment longer than the reported prompt (the prompt text came out
		// shorter than asked) is cut to it.
		n := 0
		for i, s := range q.Segments {
			if n+s.Tokens >= q.Prompt {
				q.Segments = append([]workload.Segment(nil), q.Segments[:i]...)
				if rest := q.Prompt - n; rest > 0 {
					q.Segments = append(q.Segments, workload.Segment{Key: s.Key, Tokens: rest})
				}
				break
			}
			n += s.Tokens
		}
		r.Requests = append(r.Requests, q)
	}
	sort.SliceStable(r.Requests, func(i, j int) bool { return r.Requests[i].ArrivalS < r.Requests[j].ArrivalS })
	return r
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
