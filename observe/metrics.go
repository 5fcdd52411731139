package observe

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MetricsSample is one scrape of the server's Prometheus endpoint: vLLM's
// scheduler gauges, summed over label sets (engines, models). A metric the
// server does not export is NaN-free: it is simply absent from Present.
type MetricsSample struct {
	// TimeS is when the scrape was answered, seconds since the run start.
	TimeS float64 `json:"time_s"`
	// Running and Waiting are vllm:num_requests_running / _waiting.
	Running float64 `json:"running"`
	Waiting float64 `json:"waiting"`
	// KVCacheUsage is vllm:kv_cache_usage_perc (vLLM v1) or
	// vllm:gpu_cache_usage_perc (v0), as a fraction 0..1.
	KVCacheUsage float64 `json:"kv_cache_usage"`
	// Preemptions is the vllm:num_preemptions_total counter.
	Preemptions float64 `json:"preemptions"`
	// Present lists which of the four the server exported.
	Present []string `json:"present"`
	// Err is why the scrape failed ("" when it did not).
	Err string `json:"error,omitempty"`
}

// metricNames maps exported names to the sample field they fill.
func metricField(s *MetricsSample, name string) (*float64, string) {
	switch name {
	case "vllm:num_requests_running":
		return &s.Running, "running"
	case "vllm:num_requests_waiting":
		return &s.Waiting, "waiting"
	case "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc":
		return &s.KVCacheUsage, "kv_cache_usage"
	case "vllm:num_preemptions_total", "vllm:num_preemptions":
		return &s.Preemptions, "preemptions"
	}
	return nil, ""
}

// ParseMetrics reads Prometheus text exposition format and fills a sample
// with vLLM's scheduler metrics, summing label sets. Lines it does not
// need are skipped; a malformed value of a needed metric is an error.
func ParseMetrics(text string) (MetricsSample, error) {
	var s MetricsSample
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		name := l
		if i := strings.IndexAny(l, "{ "); i >= 0 {
			name = l[:i]
		}
		dst, field := metricField(&s, name)
		if dst == nil {
			continue
		}
		rest := l[len(name):]
		if strings.HasPrefix(rest, "{") {
			j := strings.LastIndex(rest, "}")
			if j < 0 {
				return s, fmt.Errorf("line %d: unterminated labels", line)
			}
			rest = rest[j+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return s, fmt.Errorf("line %d: %s has no value", line, name)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return s, fmt.Errorf("line %d: %s: %v", line, name, err)
		}
		*dst += v
		if !seen[field] {
			seen[field] = true
			s.Present = append(s.Present, field)
		}
	}
	return s, sc.Err()
}

// scrape polls url every interval until ctx ends, sending each sample
// (failed ones with Err set) to out.
func scrape(ctx context.Context, hc *http.Client, url string, interval time.Duration, start time.Time, out chan<- MetricsSample) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s := scrapeOnce(ctx, hc, url)
		s.TimeS = time.Since(start).Seconds()
		select {
		case out <- s:
		case <-ctx.Done():
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

func scrapeOnce(ctx context.Context, hc *http.Client, url string) MetricsSample {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return MetricsSample{Err: err.Error()}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return MetricsSample{Err: connDetail(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return MetricsSample{Err: fmt.Sprintf("HTTP %d", resp.StatusCode)}
	}
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		return MetricsSample{Err: err.Error()}
	}
	s, err := ParseMetrics(b.String())
	if err != nil {
		s.Err = err.Error()
	}
	return s
}
