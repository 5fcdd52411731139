package compare

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// Load reads one side from path, telling the source by its contents: a
// directory with run.json (sim run --out, sim observe --out), a directory
// with summary_lifecycle_metrics.json (an inference-perf report), or a JSON
// file that is an inference-perf lifecycle report or a vllm bench serve
// result.
func Load(path string) (*Side, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "run.json")); err == nil {
			return loadRoofsim(path)
		}
		if _, err := os.Stat(filepath.Join(path, "summary_lifecycle_metrics.json")); err == nil {
			return loadInferencePerfDir(path)
		}
		return nil, fmt.Errorf("%s: neither a roofsim run directory (run.json) nor an inference-perf report (summary_lifecycle_metrics.json)", path)
	}
	data, err := safefile.ReadFile(path, safefile.Result)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %v", path, err)
	}
	if _, ok := probe["successes"]; ok {
		s, err := parseInferencePerf(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Side{Kind: "inference-perf", Path: path, Overall: s}, nil
	}
	_, a := probe["mean_ttft_ms"]
	_, b := probe["ttfts"]
	if a || b {
		return loadVLLM(path, data)
	}
	return nil, fmt.Errorf("%s: not an inference-perf lifecycle report (no \"successes\") nor a vllm bench serve result (no \"mean_ttft_ms\" or \"ttfts\")", path)
}

// runJSON is the part of a roofsim run.json the comparison reads.
type runJSON struct {
	Kind   string `json:"kind"`
	Config struct {
		Workload string  `json:"workload"`
		Seed     *uint64 `json:"seed"`
	} `json:"config"`
	Workload *stagedWorkload `json:"workload"`
	Summary  json.RawMessage `json:"summary"`
}

// itlDist reads the pooled ITL distribution from run.json's summary: the
// flat vllm-style result that sim run and sim observe write (schema_version
// set), or the nested traces.Summary of observed runs recorded before
// sim observe wrote the flat result.
func (rj *runJSON) itlDist() (traces.Dist, error) {
	if len(rj.Summary) == 0 {
		return traces.Dist{}, nil
	}
	fr, err := traces.DecodeResult(rj.Summary)
	if err != nil {
		return traces.Dist{}, err
	}
	if fr.SchemaVersion > 0 {
		d := fr.Dist("itl")
		if math.IsNaN(d.Mean) {
			return traces.Dist{}, nil
		}
		// One gap between each two consecutive tokens of a completed request.
		if n := fr.Numbers["total_output_tokens"] - fr.Numbers["completed"]; n > 0 {
			d.Count = uint64(n)
		}
		return d, nil
	}
	var s traces.Summary
	err = json.Unmarshal(rj.Summary, &s)
	return s.ITLms, err
}

// stagedWorkload is the part of a workload spec embedded in run.json (Go
// field names; durations as Go duration strings) that gives load stages.
type stagedWorkload struct {
	Clients []struct {
		Arrival *struct {
			Stages []struct {
				Rate     float64 `json:"rate"`
				Duration string  `json:"duration"`
			} `json:"stages"`
		} `json:"arrival"`
	} `json:"clients"`
}

func loadRoofsim(dir string) (*Side, error) {
	raw, err := safefile.ReadFile(filepath.Join(dir, "run.json"), safefile.Result)
	if err != nil {
		return nil, err
	}
	var rj runJSON
	if err := json.Unmarshal(raw, &rj); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "run.json"), err)
	}
	side := &Side{Kind: "roofsim run", Path: dir, HasIDs: true, Seed: rj.Config.Seed}
	if rj.Kind == "observed" {
		side.Kind = "roofsim observe"
	}
	var recs []traces.RequestRecord
	found := false
	for _, ext := range []string{"csv", "jsonl", "parquet"} {
		p := filepath.Join(dir, "requests."+ext)
		if _, err := os.Stat(p); err == nil {
			if recs, err = traces.ReadRequestsFile(p); err != nil {
				return nil, err
			}
			found = true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: no requests.csv, .jsonl or .parquet (run with --out)", dir)
	}
	itls, err := readITLs(filepath.Join(dir, "requests_detail.jsonl"))
	if err != nil {
		return nil, err
	}
	side.addRecords(recs, itls)
	d, err := rj.itlDist()
	if err != nil {
		return nil, fmt.Errorf("%s: summary: %v", filepath.Join(dir, "run.json"), err)
	}
	if _, ok := side.Overall.Dists[ITL]; !ok && d.Count > 0 {
		side.Overall.Dists[ITL] = Dist{Count: int(d.Count), Mean: d.Mean, P50: d.P50, P90: d.P90, P99: d.P99}
	}
	var bounds []float64
	if rj.Workload != nil {
		bounds, err = rj.Workload.bounds()
		if err != nil {
			return nil, fmt.Errorf("%s: workload: %w", filepath.Join(dir, "run.json"), err)
		}
	} else if rj.Config.Workload != "" {
		if sp, err := workload.Load(rj.Config.Workload); err == nil {
			bounds = stageBounds(sp)
		}
	}
	side.setStages(recs, bounds, itls)
	return side, nil
}

// FromRecords is the simulated side of a run held in memory: its request
// records and the workload spec that made them (whose staged open-loop
// client, if any, gives the stages), as a 'sim run --out' directory of the
// same run would load, without per-token gaps.
func FromRecords(recs []traces.RequestRecord, spec *workload.Spec) *Side {
	side := &Side{Kind: "roofsim run", HasIDs: true}
	if spec != nil {
		seed := spec.Seed
		side.Seed = &seed
	}
	side.addRecords(recs, nil)
	side.setStages(recs, stageBounds(spec), nil)
	return side
}

// addRecords sets the side's completed requests and its overall summary
// from recs; itls (may be nil) gives each request's inter-token gaps.
func (side *Side) addRecords(recs []traces.RequestRecord, itls map[uint64][]float64) {
	failed := 0
	for _, r := range recs {
		if r.Status != traces.StatusOK {
			failed++
			continue
		}
		side.Requests = append(side.Requests, Request{ID: r.ID, ArrivalS: r.ArrivalS, TTFT: r.TTFTms, TPOT: r.TPOTms,
			E2E: r.E2Ems, Queue: r.QueueMs, ITL: itls[r.ID], Output: r.OutputTokens, Prompt: r.PromptTokens})
	}
	side.Overall = summarize(side.Requests, failed)
}

// setStages splits recs into the stages bounds describes (start times and
// the last stage's end, s); fewer than two bounds mean no stages.
func (side *Side) setStages(recs []traces.RequestRecord, bounds []float64, itls map[uint64][]float64) {
	if len(bounds) > 1 {
		side.bounds = bounds
		side.Stages = splitStages(recs, bounds, itls)
	}
}

// readITLs reads the inter-token gaps of each request from an observe
// detail file; an absent file gives an empty map.
func readITLs(path string) (map[uint64][]float64, error) {
	f, err := safefile.Open(path, safefile.Trace)
	if errors.Is(err, os.ErrNotExist) {
		return map[uint64][]float64{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[uint64][]float64{}
	sc := bufio.NewScanner(safefile.SkipBOM(f))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		var d struct {
			ID    uint64    `json:"id"`
			ITLms []float64 `json:"itl_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out[d.ID] = d.ITLms
	}
	return out, sc.Err()
}

// stageBounds returns the start times (s) of the load stages of spec's
// first staged open-loop client, then its end; nil when there are none.
func stageBounds(spec *workload.Spec) []float64 {
	if spec == nil {
		return nil
	}
	for _, c := range spec.Clients {
		if c.Arrival == nil || len(c.Arrival.Stages) == 0 {
			continue
		}
		b := []float64{0}
		t := 0.0
		for _, st := range c.Arrival.Stages {
			t += st.Duration.Seconds()
			b = append(b, t)
		}
		return b
	}
	return nil
}

// bounds is stageBounds for an embedded workload.
func (w *stagedWorkload) bounds() ([]float64, error) {
	for _, c := range w.Clients {
		if c.Arrival == nil || len(c.Arrival.Stages) == 0 {
			continue
		}
		b := []float64{0}
		t := 0.0
		for i, st := range c.Arrival.Stages {
			d, err := time.ParseDuration(st.Duration)
			if err != nil {
				return nil, fmt.Errorf("stages[%d].duration: %v", i, err)
			}
			t += d.Seconds()
			b = append(b, t)
		}
		return b, nil
	}
	return nil, nil
}

// splitStages summarizes the records of each stage (by arrival time).
func splitStages(recs []traces.RequestRecord, bounds []float64, itls map[uint64][]float64) []Summary {
	n := len(bounds) - 1
	reqs := make([][]Request, n)
	failed := make([]int, n)
	for _, r := range recs {
		i := sort.SearchFloat64s(bounds, r.ArrivalS+1e-12) - 1
		if i < 0 || i >= n {
			continue
		}
		if r.Status != traces.StatusOK {
			failed[i]++
			continue
		}
		reqs[i] = append(reqs[i], Request{ID: r.ID, ArrivalS: r.ArrivalS, TTFT: r.TTFTms, TPOT: r.TPOTms,
			E2E: r.E2Ems, Queue: r.QueueMs, ITL: itls[r.ID], Output: r.OutputTokens})
	}
	out := make([]Summary, n)
	for i := range out {
		out[i] = summarize(reqs[i], failed[i])
	}
	return out
}

// ipReport is an inference-perf lifecycle-metrics report (summary or one
// stage), times in seconds.
type ipReport struct {
	LoadSummary *struct {
		Count         int     `json:"count"`
		RequestedRate float64 `json:"requested_rate"`
		AchievedRate  float64 `json:"achieved_rate"`
	} `json:"load_summary"`
	Successes *struct {
		Count   int `json:"count"`
		Latency struct {
			RequestLatency     map[string]float64 `json:"request_latency"`
			TimePerOutputToken map[string]float64 `json:"time_per_output_token"`
			TimeToFirstToken   map[string]float64 `json:"time_to_first_token"`
			InterTokenLatency  map[string]float64 `json:"inter_token_latency"`
		} `json:"latency"`
		Throughput struct {
			RequestsPerSec     *float64 `json:"requests_per_sec"`
			OutputTokensPerSec *float64 `json:"output_tokens_per_sec"`
		} `json:"throughput"`
	} `json:"successes"`
	Failures *struct {
		Count int `json:"count"`
	} `json:"failures"`
}

// ipDist converts a summarize() object (seconds; "median", "p90", ...) to
// a Dist in ms.
func ipDist(m map[string]float64, count int) Dist {
	if m == nil {
		return missing()
	}
	get := func(k string) float64 {
		if v, ok := m[k]; ok {
			return v * 1e3
		}
		return math.NaN()
	}
	return Dist{Count: count, Mean: get("mean"), P50: get("median"), P90: get("p90"), P99: get("p99")}
}

func parseInferencePerf(data []byte) (Summary, error) {
	var r ipReport
	if err := json.Unmarshal(data, &r); err != nil {
		return Summary{}, err
	}
	if r.Successes == nil {
		return Summary{}, errors.New("no \"successes\" section")
	}
	s := Summary{Dists: map[string]Dist{}, Completed: r.Successes.Count, RequestThroughput: math.NaN(), OutputThroughput: math.NaN()}
	if r.Failures != nil {
		s.Failed = r.Failures.Count
	}
	l := r.Successes.Latency
	n := r.Successes.Count
	s.Dists[TTFT] = ipDist(l.TimeToFirstToken, n)
	s.Dists[TPOT] = ipDist(l.TimePerOutputToken, n)
	s.Dists[ITL] = ipDist(l.InterTokenLatency, 0)
	s.Dists[E2E] = ipDist(l.RequestLatency, n)
	if v := r.Successes.Throughput.RequestsPerSec; v != nil {
		s.RequestThroughput = *v
	}
	if v := r.Successes.Throughput.OutputTokensPerSec; v != nil {
		s.OutputThroughput = *v
	}
	return s, nil
}

// ipStage returns N for a file named stage_N_lifecycle_metrics.json.
func ipStage(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "stage_")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, "_lifecycle_metrics.json")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || strconv.Itoa(i) != num {
		return 0, false
	}
	return i, true
}

func loadInferencePerfDir(dir string) (*Side, error) {
	read := func(name string) (Summary, error) {
		data, err := safefile.ReadFile(filepath.Join(dir, name), safefile.Result)
		if err != nil {
			return Summary{}, err
		}
		s, err := parseInferencePerf(data)
		if err != nil {
			return Summary{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return s, nil
	}
	side := &Side{Kind: "inference-perf", Path: dir}
	var err error
	if side.StreamLines, err = ipStreamLines(dir); err != nil {
		return nil, err
	}
	if side.Overall, err = read("summary_lifecycle_metrics.json"); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	stages := map[int]string{}
	maxStage := -1
	for _, e := range entries {
		if i, ok := ipStage(e.Name()); ok {
			stages[i] = e.Name()
			maxStage = max(maxStage, i)
		}
	}
	for i := 0; i <= maxStage; i++ {
		name, ok := stages[i]
		if !ok {
			return nil, fmt.Errorf("%s: stage_%d_lifecycle_metrics.json missing while stage %d is there", dir, i, maxStage)
		}
		s, err := read(name)
		if err != nil {
			return nil, err
		}
		side.Stages = append(side.Stages, s)
	}
	return side, nil
}

// vllmResult is the part of a vllm bench serve result JSON the comparison
// reads: the summary figures and, when saved (--save-detailed), the
// per-request arrays in seconds.
type vllmResult struct {
	Completed         int         `json:"completed"`
	Failed            int         `json:"failed"`
	RequestThroughput *float64    `json:"request_throughput"`
	OutputThroughput  *float64    `json:"output_throughput"`
	TTFTs             []float64   `json:"ttfts"`
	ITLs              [][]float64 `json:"itls"`
	Latencies         []float64   `json:"latencies"`
	OutputLens        []int       `json:"output_lens"`
	StartTimes        []float64   `json:"start_times"`
	Errors            []string    `json:"errors"`
}

func loadVLLM(path string, data []byte) (*Side, error) {
	var r vllmResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var flat map[string]any
	_ = json.Unmarshal(data, &flat)
	side := &Side{Kind: "vllm bench serve", Path: path}
	if n := len(r.TTFTs); n > 0 {
		if len(r.Latencies) != n || (len(r.OutputLens) != n) || (r.ITLs != nil && len(r.ITLs) != n) {
			return nil, fmt.Errorf("%s: per-request arrays differ in length (ttfts %d, latencies %d, output_lens %d, itls %d)",
				path, n, len(r.Latencies), len(r.OutputLens), len(r.ITLs))
		}
		failed := 0
		for i := 0; i < n; i++ {
			if (r.Errors != nil && i < len(r.Errors) && r.Errors[i] != "") || r.Latencies[i] <= 0 {
				failed++
				continue
			}
			q := Request{ID: uint64(i), TTFT: r.TTFTs[i] * 1e3, E2E: r.Latencies[i] * 1e3, TPOT: math.NaN(), Queue: math.NaN(), Output: r.OutputLens[i]}
			if i < len(r.StartTimes) {
				q.ArrivalS = r.StartTimes[i] - r.StartTimes[0]
			}
			if q.Output > 1 {
				q.TPOT = (q.E2E - q.TTFT) / float64(q.Output-1)
			}
			if r.ITLs != nil {
				for _, g := range r.ITLs[i] {
					q.ITL = append(q.ITL, g*1e3)
				}
			}
			side.Requests = append(side.Requests, q)
		}
		side.Overall = summarize(side.Requests, failed)
	} else {
		side.Overall = Summary{Dists: map[string]Dist{}, Completed: r.Completed, Failed: r.Failed}
		num := func(k string) float64 {
			if v, ok := flat[k].(float64); ok {
				return v
			}
			return math.NaN()
		}
		for m, key := range map[string]string{TTFT: "ttft", TPOT: "tpot", ITL: "itl", E2E: "e2el"} {
			d := Dist{Count: r.Completed, Mean: num("mean_" + key + "_ms"), P50: num("median_" + key + "_ms"),
				P90: num("p90_" + key + "_ms"), P99: num("p99_" + key + "_ms")}
			if !math.IsNaN(d.Mean) || !math.IsNaN(d.P50) {
				side.Overall.Dists[m] = d
			}
		}
	}
	side.Overall.RequestThroughput, side.Overall.OutputThroughput = math.NaN(), math.NaN()
	if r.RequestThroughput != nil {
		side.Overall.RequestThroughput = *r.RequestThroughput
	}
	if r.OutputThroughput != nil {
		side.Overall.OutputThroughput = *r.OutputThroughput
	}
	return side, nil
}
