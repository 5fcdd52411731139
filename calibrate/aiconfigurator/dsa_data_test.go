package aiconfigurator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// TestShippedDSAFitsBeatFirstPrinciples: every shipped vLLM 0.24.0
// profile that carries DeepSeek sparse attention fits prices AIConfigurator's
// DSA module tables of its GPU better (median |error|) than the same
// profile without them (first principles), for prefill and decode. The fits
// were made from these rows (`sim calibrate mixers`), so this checks that
// the profile holds what the command kept; the held-out errors are the
// command's cross-validation (docs/mixer-kernels.md).
func TestShippedDSAFitsBeatFirstPrinciples(t *testing.T) {
	db, err := aic.Open(shareddata.Path(t, "aic"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, gs := range []struct{ gpu, system string }{{"h100", "h100_sxm"}, {"h200", "h200_sxm"}, {"b200", "b200_sxm"}, {"b300", "b300_sxm"}} {
		path := filepath.Join("..", "..", "hardware", "profiles", gs.gpu, "vllm-0.24.0.yaml")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		p, err := hardware.LoadProfile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := hardware.Lookup(gs.gpu)
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := ReadAICMixers(db, gs.system, aic.Release{0, 24, 0})
		if err != nil {
			t.Fatal(err)
		}
		first := p.Clone()
		for _, f := range []hardware.MixerKernel{hardware.MixerDSAPrefill, hardware.MixerDSADecode, hardware.MixerDSAIndexerPrefill, hardware.MixerDSAIndexerDecode} {
			delete(first.MixerKernels, f)
		}
		for _, rows := range [][]kernels.DSAModuleRow{k.DSAContext, k.DSAGeneration} {
			fit, n, fitted, err := kernels.DSAModuleErrors(rows, g, p)
			if err != nil {
				t.Fatal(err)
			}
			if !fitted {
				continue
			}
			fp, _, _, err := kernels.DSAModuleErrors(rows, g, first)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			t.Logf("%s %s: %d rows, first principles %.1f%% (p90 %.1f), fitted %.1f%% (p90 %.1f)", gs.gpu, rows[0].Phase, n,
				fp.MedianAPE, fp.P90APE, fit.MedianAPE, fit.P90APE)
			if !(fit.MedianAPE < fp.MedianAPE) {
				t.Errorf("%s %s: fitted median %.1f%% does not beat first principles' %.1f%%", gs.gpu, rows[0].Phase, fit.MedianAPE, fp.MedianAPE)
			}
		}
	}
	t.Logf("%d profile phases checked", checked)
	if checked < 2 {
		t.Errorf("%d profile phases checked; want at least b200's prefill and decode (its vllm-0.24.0 profile carries DSA fits)", checked)
	}
}
