package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/internal/safefile"
)

// Names of the length distributions accepted in LengthDist.Dist.
const (
	DistConstant    = "constant"
	DistUniform     = "uniform"
	DistNormal      = "normal"
	DistLognormal   = "lognormal"
	DistExponential = "exponential"
	DistEmpirical   = "empirical"
)

// maxRedraws is how many times a truncated continuous distribution is redrawn before the
// value is clamped into [min, max].
const maxRedraws = 100

// LengthDist is a distribution of token counts (or of session turns). Every sample is an
// integer >= 1 obtained by rounding a draw to the nearest integer.
//
//   - constant: Value.
//   - uniform: integers in [Min, Max], each equally likely.
//   - normal: Mean and Std of the lengths.
//   - lognormal: Mean and Std of the resulting lengths (not of their logarithm); the
//     log-space parameters are sigma² = ln(1 + Std²/Mean²), mu = ln(Mean) − sigma²/2.
//   - exponential: Mean.
//   - empirical: File, a text file with one length per line or "value,weight" per line
//     (blank lines and lines starting with '#' are skipped); a relative path is relative
//     to the workload file's directory.
//
// normal, lognormal and exponential accept optional Min and Max (0 = unbounded). They are
// truncated by redrawing: a rounded draw outside [max(Min,1), Max] is redrawn, up to 100
// times, after which the last draw is clamped into the interval. The lower bound is at
// least 1 even when Min is unset, so a wide normal is truncated at 1, not clamped.
type LengthDist struct {
	Dist  string  `yaml:"dist"`
	Value int     `yaml:"value,omitempty"`
	Min   int     `yaml:"min,omitempty"`
	Max   int     `yaml:"max,omitempty"`
	Mean  float64 `yaml:"mean,omitempty"`
	Std   float64 `yaml:"std,omitempty"`
	File  string  `yaml:"file,omitempty"`

	// empirical holds the loaded table of an empirical distribution (immutable once
	// loaded, so copies of the spec may share it).
	empirical *empiricalTable
}

// maxEmpiricalValues bounds the lines of an empirical table.
const maxEmpiricalValues = 1 << 24

// empiricalTable is a discrete distribution: values with cumulative weights.
type empiricalTable struct {
	values []int
	cum    []float64 // cum[i] = sum of weights of values[0..i]
}

// validate checks the parameters of d against the range [1, hi] of its samples (every
// value, bound and mean must lie in it; std in [0, hi]); path names the field in
// errors. The sampler and the empirical table take the same hi (limits.MaxTokens for
// token counts, limits.MaxTurns for session turns).
func (d *LengthDist) validate(path string, hi int) error {
	inRange := func(field string, v, lo int) error {
		if err := limits.IntIn(v, lo, hi); err != nil {
			return fmt.Errorf("%s.%s: %w", path, field, err)
		}
		return nil
	}
	unused := func(field string, set bool) error {
		if set {
			return fmt.Errorf("%s.%s: not used by dist %s", path, field, d.Dist)
		}
		return nil
	}
	checkBounds := func() error {
		if err := inRange("min", d.Min, 0); err != nil {
			return fmt.Errorf("%w (0 = unbounded)", err)
		}
		if err := inRange("max", d.Max, 0); err != nil {
			return fmt.Errorf("%w (0 = unbounded)", err)
		}
		if d.Max > 0 && d.Min > d.Max {
			return fmt.Errorf("%s.min: must be <= max (%d > %d)", path, d.Min, d.Max)
		}
		return nil
	}
	checkMean := func() error {
		if err := limits.FloatIn(d.Mean, 1, float64(hi)); err != nil {
			return fmt.Errorf("%s.mean: %w", path, err)
		}
		return nil
	}
	var errs []error
	switch d.Dist {
	case DistConstant:
		if err := inRange("value", d.Value, 1); err != nil {
			return err
		}
		errs = append(errs, unused("min", d.Min != 0), unused("max", d.Max != 0),
			unused("mean", d.Mean != 0), unused("std", d.Std != 0), unused("file", d.File != ""))
	case DistUniform:
		if err := inRange("min", d.Min, 1); err != nil {
			return err
		}
		if d.Max < d.Min {
			return fmt.Errorf("%s.max: must be >= min (%d < %d)", path, d.Max, d.Min)
		}
		if err := inRange("max", d.Max, 1); err != nil {
			return err
		}
		errs = append(errs, unused("value", d.Value != 0), unused("mean", d.Mean != 0),
			unused("std", d.Std != 0), unused("file", d.File != ""))
	case DistNormal, DistLognormal:
		errs = append(errs, checkMean())
		if err := limits.FloatIn(d.Std, 0, float64(hi)); err != nil {
			errs = append(errs, fmt.Errorf("%s.std: %w", path, err))
		}
		errs = append(errs, checkBounds(), unused("value", d.Value != 0), unused("file", d.File != ""))
	case DistExponential:
		errs = append(errs, checkMean(), checkBounds(), unused("value", d.Value != 0),
			unused("std", d.Std != 0), unused("file", d.File != ""))
	case DistEmpirical:
		if strings.TrimSpace(d.File) == "" {
			return fmt.Errorf("%s.file: required for dist empirical", path)
		}
		errs = append(errs, unused("value", d.Value != 0), unused("min", d.Min != 0),
			unused("max", d.Max != 0), unused("mean", d.Mean != 0), unused("std", d.Std != 0))
	case "":
		return fmt.Errorf("%s.dist: required (one of constant, uniform, normal, lognormal, exponential, empirical)", path)
	default:
		return fmt.Errorf("%s.dist: unknown distribution %q (want constant, uniform, normal, lognormal, exponential or empirical)", path, d.Dist)
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// upper is the largest value a sample of the validated d can take; hi when the
// distribution is unbounded above.
func (d *LengthDist) upper(hi int) int {
	switch d.Dist {
	case DistConstant:
		return d.Value
	case DistUniform:
		return d.Max
	case DistEmpirical:
		if d.empirical != nil {
			return slices.Max(d.empirical.values)
		}
		return hi
	}
	if d.Max > 0 {
		return d.Max
	}
	return hi
}

// lower is the smallest value a sample of the validated (and loaded) d can take.
func (d *LengthDist) lower() int {
	switch d.Dist {
	case DistConstant:
		return d.Value
	case DistEmpirical:
		if d.empirical != nil {
			return slices.Min(d.empirical.values)
		}
	}
	return max(d.Min, 1)
}

// mean is the expected sample of the validated (and loaded) d, ignoring truncation.
func (d *LengthDist) mean() float64 {
	switch d.Dist {
	case DistConstant:
		return float64(d.Value)
	case DistUniform:
		return (float64(d.Min) + float64(d.Max)) / 2
	case DistEmpirical:
		if t := d.empirical; t != nil {
			sum, prev := 0.0, 0.0
			for i, v := range t.values {
				sum += float64(v) * (t.cum[i] - prev)
				prev = t.cum[i]
			}
			return sum / prev
		}
		return 1
	}
	return math.Max(d.Mean, 1)
}

// load reads the table of an empirical distribution (a no-op otherwise or when already
// loaded). A relative File is resolved against baseDir; values must lie in [1, hi].
func (d *LengthDist) load(baseDir, path string, hi int) error {
	if d.Dist != DistEmpirical || d.empirical != nil {
		return nil
	}
	file := d.File
	if !filepath.IsAbs(file) && baseDir != "" {
		file = filepath.Join(baseDir, file)
	}
	data, err := safefile.ReadFile(file, safefile.Table)
	if err != nil {
		return fmt.Errorf("%s.file: %v", path, err)
	}
	t, err := parseEmpirical(data, file, hi)
	if err != nil {
		return fmt.Errorf("%s.file: %v", path, err)
	}
	d.empirical = t
	return nil
}

// parseEmpirical parses "value" or "value,weight" lines, values in [1, hi], weights
// finite and > 0 with a finite sum; errors carry file:line.
func parseEmpirical(data []byte, file string, hi int) (*empiricalTable, error) {
	t := &empiricalTable{}
	total := 0.0
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		valStr, wStr, hasW := strings.Cut(s, ",")
		v, err := strconv.Atoi(strings.TrimSpace(valStr))
		if err != nil || v < 1 || v > hi {
			return nil, fmt.Errorf("%s:%d: value %s: must be an integer in [1, %d]", file, line, safefile.Quote(strings.TrimSpace(valStr)), hi)
		}
		w := 1.0
		if hasW {
			w, err = strconv.ParseFloat(strings.TrimSpace(wStr), 64)
			if err != nil || !(w > 0) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("%s:%d: weight %s: must be a number > 0", file, line, safefile.Quote(strings.TrimSpace(wStr)))
			}
		}
		total += w
		if math.IsInf(total, 0) {
			return nil, fmt.Errorf("%s:%d: weight %s: the weights' sum overflows; scale them down", file, line, safefile.Quote(strings.TrimSpace(wStr)))
		}
		if len(t.values) == maxEmpiricalValues {
			return nil, fmt.Errorf("%s:%d: more than %d values", file, line, maxEmpiricalValues)
		}
		t.values = append(t.values, v)
		t.cum = append(t.cum, total)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(t.values) == 0 {
		return nil, fmt.Errorf("%s: no values", file)
	}
	return t, nil
}

// sampler draws from a validated LengthDist. It is a value type with no interface
// dispatch so that sampling never allocates.
type sampler struct {
	kind      string
	value     int
	lo, hi    int     // truncation window for continuous kinds; [min,max] for uniform
	mean, std float64 // normal: as given; exponential: mean
	mu, sigma float64 // lognormal log-space parameters
	emp       *empiricalTable
}

// newSampler prepares d for sampling, with samples in [1, hi]. d must be valid (and
// loaded, if empirical).
func newSampler(d *LengthDist, hi int) sampler {
	s := sampler{kind: d.Dist, value: d.Value, mean: d.Mean, std: d.Std, emp: d.empirical}
	s.lo, s.hi = max(d.Min, 1), hi
	if d.Max > 0 {
		s.hi = d.Max
	}
	if d.Dist == DistLognormal {
		s2 := math.Log1p(d.Std * d.Std / (d.Mean * d.Mean))
		s.sigma = math.Sqrt(s2)
		s.mu = math.Log(d.Mean) - s2/2
	}
	return s
}

// sample returns one length >= 1. Cost O(1), or O(log n) for an empirical table of n
// values, and up to 100 draws when truncation rejects.
func (s *sampler) sample(r *rand.Rand) int {
	switch s.kind {
	case DistConstant:
		return s.value
	case DistUniform:
		return s.lo + r.IntN(s.hi-s.lo+1)
	case DistEmpirical:
		u := r.Float64() * s.emp.cum[len(s.emp.cum)-1]
		lo, hi := 0, len(s.emp.cum)-1
		for lo < hi { // first index with cum > u
			m := int(uint(lo+hi) >> 1)
			if s.emp.cum[m] > u {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return s.emp.values[lo]
	}
	var x float64
	for range maxRedraws {
		switch s.kind {
		case DistNormal:
			x = s.mean + s.std*r.NormFloat64()
		case DistLognormal:
			x = math.Exp(s.mu + s.sigma*r.NormFloat64())
		case DistExponential:
			x = s.mean * r.ExpFloat64()
		default:
			panic("workload: sampler of unknown kind " + s.kind)
		}
		x = math.Round(x)
		if x >= float64(s.lo) && x <= float64(s.hi) {
			return int(x)
		}
	}
	if math.IsNaN(x) {
		return s.lo
	}
	return int(math.Min(math.Max(x, float64(s.lo)), float64(s.hi)))
}
