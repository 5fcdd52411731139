package traces

import (
	"io"
	"testing"
)

// BenchmarkRequestWriter writes 1M request records to io.Discard per
// operation, for each format. Metrics: records/s and bytes allocated per
// record (B/op is per 1M records).
func BenchmarkRequestWriter(b *testing.B) {
	const perOp = 1_000_000
	recs := testRequests(4096)
	for _, f := range allFormats {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w, err := NewRequestWriter(io.Discard, f)
				if err != nil {
					b.Fatal(err)
				}
				for i := range perOp {
					if err := w.Write(&recs[i&4095]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(perOp)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkStepWriter writes step records to io.Discard; one op is one record.
func BenchmarkStepWriter(b *testing.B) {
	recs := testSteps(4096)
	for _, f := range allFormats {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			w, _ := NewStepWriter(io.Discard, f)
			i := 0
			for b.Loop() {
				if err := w.Write(&recs[i&4095]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkCollector adds one request and its inter-token gaps per op.
func BenchmarkCollector(b *testing.B) {
	recs := testRequests(4096)
	c := NewCollector([]string{"chat", "batch,jobs"})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := &recs[i&4095]
		c.AddRequest(r)
		for range r.OutputTokens - 1 {
			c.AddITL(0, 0.02)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	_ = c.Summary()
}

// BenchmarkSketchAdd measures one Add; BenchmarkSketchQuantile one quantile
// of a sketch holding 1M lognormal-ish values.
func BenchmarkSketchAdd(b *testing.B) {
	var s Sketch
	x := 1.0
	for b.Loop() {
		s.Add(x)
		x = x*1.618 + 0.1
		if x > 1e6 {
			x = 0.37
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "values/s")
}

func BenchmarkSketchQuantile(b *testing.B) {
	var s Sketch
	x := 1.0
	for range 1_000_000 {
		s.Add(x)
		x = x*1.618 + 0.1
		if x > 1e6 {
			x = 0.37
		}
	}
	for b.Loop() {
		_ = s.Quantile(0.99)
	}
}
