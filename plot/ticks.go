package plot

import (
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
)

// logTicker places ticks on a logarithmic axis: minor ticks at every integer
// multiple 1..9 of each power of ten in range, labels at decades, adding the
// mantissas 2 and 5 (then all of 1..9) when fewer than three decades are visible.
// When more than maxLabels decades are visible only every k-th decade is labelled.
type logTicker struct {
	// label formats a tick value; nil means formatNumber.
	label func(v float64) string
}

var _ gplot.Ticker = logTicker{}

// maxLabels bounds the number of labelled ticks on a log axis.
const maxLabels = 8

// Ticks implements gplot.Ticker. It returns no ticks for an empty or
// non-positive range rather than panicking.
func (t logTicker) Ticks(min, max float64) []gplot.Tick {
	if !(min > 0) || !(max >= min) || math.IsInf(max, 0) {
		return nil
	}
	label := t.label
	if label == nil {
		label = formatNumber
	}
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	const eps = 1e-9
	inRange := func(v float64) bool { return v >= min*(1-eps) && v <= max*(1+eps) }

	mantissaSets := [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}
	step := 1
	if n := hi - lo; n > maxLabels {
		step = (n + maxLabels - 1) / maxLabels
	}
	labelled := func(set []int, e, m int) bool {
		for _, s := range set {
			if s == m {
				return m != 1 || len(set) > 1 || (e-lo)%step == 0
			}
		}
		return false
	}
	set := mantissaSets[len(mantissaSets)-1]
	for _, s := range mantissaSets {
		count := 0
		for e := lo; e <= hi; e++ {
			for m := 1; m <= 9; m++ {
				if labelled(s, e, m) && inRange(float64(m)*math.Pow10(e)) {
					count++
				}
			}
		}
		if count >= 3 {
			set = s
			break
		}
	}

	var ticks []gplot.Tick
	for e := lo; e <= hi; e++ {
		for m := 1; m <= 9; m++ {
			v := roundSig(float64(m)*math.Pow10(e), 12)
			if !inRange(v) {
				continue
			}
			tk := gplot.Tick{Value: v}
			if labelled(set, e, m) {
				tk.Label = label(v)
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// roundSig rounds v to n significant decimal digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// formatNumber formats v compactly for a tick label: plain decimal notation
// between 0.001 and 100000, otherwise "2.5e-5" / "1e6" style.
func formatNumber(v float64) string {
	v = roundSig(v, 6)
	a := math.Abs(v)
	if a == 0 {
		return "0"
	}
	if a >= 1e-3 && a < 1e5 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-")
	exp = strings.TrimLeft(exp, "0")
	if neg {
		exp = "-" + exp
	}
	return mant + "e" + exp
}

// siPrefixes maps powers of a thousand (index 0 = 10^-12) to SI prefixes.
var siPrefixes = [...]string{"p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E", "Z"}

// siExponent returns the power of ten (a multiple of 3, clamped to the prefix
// table) that puts v's mantissa in [1, 1000).
func siExponent(v float64) int {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0
	}
	v = roundSig(v, 9)
	// Decimal exponent of v, corrected for Log10 rounding near powers of ten.
	d := int(math.Floor(math.Log10(v)))
	if math.Pow10(d+1) <= v {
		d++
	} else if math.Pow10(d) > v {
		d--
	}
	e := d - ((d%3)+3)%3 // round down to a multiple of 3
	return min(max(e, -12), 21)
}

// formatWithExponent formats v in units of 10^exp3 (a multiple of 3) followed
// by the matching SI prefix and unit, e.g. (1.979e15, 12, "FLOP/s") gives
// "1979 TFLOP/s". The mantissa keeps three significant digits, or all integer
// digits when it is 100 or more.
func formatWithExponent(v float64, exp3 int, unit string) string {
	m := v / math.Pow10(exp3)
	var s string
	switch a := math.Abs(m); {
	case a >= 100:
		s = strconv.FormatFloat(m, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(m, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(m, 'f', 2, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + " " + siPrefixes[exp3/3+4] + unit
}

// formatSI formats v with the SI prefix that puts its mantissa in [1, 1000),
// e.g. formatSI(3.35e12, "B/s") is "3.35 TB/s".
func formatSI(v float64, unit string) string {
	return formatWithExponent(v, siExponent(v), unit)
}

// formatIntensity formats an arithmetic intensity in FLOP/byte with three
// significant digits, e.g. 295.2 -> "295", 0.25 -> "0.25".
func formatIntensity(v float64) string {
	return formatNumber(roundSig(v, 3))
}

// linearTicker places "nice" ticks on a linear axis: four to ten labelled
// ticks at multiples of 1, 2 or 5 times a power of ten (the largest such step
// that yields at least four), with unlabelled minor ticks in between.
type linearTicker struct{}

var _ gplot.Ticker = linearTicker{}

// Ticks implements gplot.Ticker.
func (linearTicker) Ticks(lo, hi float64) []gplot.Tick {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	if !(hi > lo) {
		return []gplot.Tick{{Value: lo, Label: formatNumber(lo)}}
	}
	// The largest 1-2-5 step that still labels at least four ticks.
	count := func(s float64) float64 { return math.Floor(hi/s+1e-9) - math.Ceil(lo/s-1e-9) + 1 }
	step, mant := niceStep((hi - lo) / 10)
	for {
		next, nm := niceStep(step * 1.5)
		if count(next) < 4 {
			break
		}
		step, mant = next, nm
	}
	minor := step / 5
	if mant == 2 {
		minor = step / 4
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	label := func(v float64) string {
		if a := math.Abs(v); a != 0 && (a >= 1e6 || a < 1e-3) {
			return formatNumber(v)
		}
		return strconv.FormatFloat(v, 'f', decimals, 64)
	}
	var ticks []gplot.Tick
	const eps = 1e-9
	span := hi - lo
	for k := math.Ceil(lo/minor - eps); k*minor <= hi+eps*span; k++ {
		v := roundSig(k*minor, 12)
		tk := gplot.Tick{Value: v}
		if r := math.Abs(v/step - math.Round(v/step)); r < 1e-6 {
			if v == 0 {
				v = 0 // avoid "-0"
			}
			tk.Label = label(v)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// niceStep returns the smallest step of the form m*10^k, m in {1, 2, 5}, that
// is >= raw (raw > 0), and m.
func niceStep(raw float64) (step float64, mant int) {
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []int{1, 2, 5, 10} {
		if s := float64(m) * p; s >= raw*(1-1e-12) {
			if m == 10 {
				return s, 1
			}
			return s, m
		}
	}
	return 10 * p, 1
}
