package kernels

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

// decodeLike is a grid of memory-bound decode-attention rows, pairs from 1
// to 1024 and 16 KB to 64 MB of KV per pair, timed by truth.
func decodeLike(truth hardware.OpEfficiency) []Sample {
	var ss []Sample
	for pairs := 1; pairs <= 1024; pairs *= 2 {
		for per := 16e3; per <= 64e6; per *= 2 {
			s := Sample{FLOPs: pairs2(pairs) * per, Bytes: float64(pairs) * per, PeakFLOPS: 1e15,
				BandwidthBytesPerSec: 3e12, SeqHeads: pairs}
			s.Seconds = s.Predict(truth)
			ss = append(ss, s)
		}
	}
	return ss
}

// pairs2 is a FLOP-per-byte intensity of 1 (far below the ridge).
func pairs2(int) float64 { return 1 }

func decodeFamily(ss []Sample) opFamily {
	f := fieldFamily(FamilyAttentionDecode, ss, func(p *hardware.Profile) *hardware.OpEfficiency { return &p.AttentionDecode })
	f.pairBytes = true
	return f
}

// The selection picks the index the rows were made with: pair bytes for
// rows whose streaming rate ramps with the bytes per pair, bytes for rows
// whose rate ramps with the total; the chosen fit then predicts the rows.
func TestSelectMemoryIndexFindsTheMechanism(t *testing.T) {
	def := hardware.DefaultProfile()
	for _, tc := range []struct {
		idx  hardware.MemoryIndex
		half float64
	}{{hardware.MemoryByPairBytes, 2e6}, {hardware.MemoryByBytes, 2e8}} {
		// Exp 2: with Exp 1 a pair-bytes curve is the bytes curve at its Max
		// plus a fixed time per pair (PerSeqHeadUS), and the rows could not
		// tell the two apart.
		truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 0.9, Half: tc.half, Exp: 2},
			MemoryIndex: tc.idx, LaunchUS: 5, PerSeqHeadUS: 0.02}
		fams := []opFamily{decodeFamily(decodeLike(truth))}
		ch, err := applyMemoryIndexSelection(fams, def, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ch) != 1 {
			t.Fatalf("%q: %d choices, want 1", tc.idx, len(ch))
		}
		t.Log(ch[0])
		if fams[0].memIndex != tc.idx || ch[0].Kept != (tc.idx == hardware.MemoryByPairBytes) {
			t.Errorf("rows made with %q: chose %q (%v)", tc.idx, fams[0].memIndex, ch[0])
		}
		fit, err := FitOpEfficiency(fams[0].samples, fams[0].start(def), 1, 4)
		if err != nil {
			t.Fatal(err)
		}
		if fit.Efficiency.MemoryIndex != tc.idx || fit.RMSLogError > 0.02 {
			t.Errorf("rows made with %q: fit index %q, rms log error %.3g", tc.idx, fit.Efficiency.MemoryIndex, fit.RMSLogError)
		}
	}
}

// A family that offers no choice (GEMM, prefill attention) is left alone.
func TestSelectMemoryIndexOnlyWhereOffered(t *testing.T) {
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 0.9, Half: 2e6, Exp: 1}}
	f := decodeFamily(decodeLike(truth))
	f.pairBytes = false
	ch, err := applyMemoryIndexSelection([]opFamily{f}, hardware.DefaultProfile(), 1)
	if err != nil || ch != nil {
		t.Errorf("no choice offered: %v, %v", ch, err)
	}
}
