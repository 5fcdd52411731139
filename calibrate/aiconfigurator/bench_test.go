package aiconfigurator

import (
	"testing"
	"time"

	"github.com/roofsim/roofsim/calibrate/aic"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// BenchmarkCalibrateH100 fits the H100 profile to the measured H100 kernel
// tables, the work of sim calibrate --gpu h100 --kernels (reading the
// tables included). It reports fitted families per second and measured
// rows per second.
func BenchmarkCalibrateH100(b *testing.B) {
	benchCalibrate(b, "h100", Dir(kernelsDir(b, "h100_sxm")))
}

// benchCalibrate fits gpu's profile to src's tables once per iteration
// and reports fitted families per second and measured rows per second;
// with -v it logs when each family is done.
func benchCalibrate(b *testing.B, gpu string, src kernels.Source) {
	g, err := hardware.Lookup(gpu)
	if err != nil {
		b.Fatal(err)
	}
	opts := kernels.DefaultOptions()
	opts.GPU = g
	var fams, rows int
	start := time.Now()
	for b.Loop() {
		opts.Progress = func(_, total int, family string) {
			fams++
			if testing.Verbose() {
				b.Logf("%6.1f s  %s", time.Since(start).Seconds(), family)
			}
		}
		res, err := kernels.Calibrate(src, opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range res.Files {
			rows += f.Rows
		}
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(fams)/s, "families/s")
	b.ReportMetric(float64(rows)/s, "rows/s")
}

// BenchmarkCalibrateServing fits the engine overheads to the H100 rows of
// the closed-loop vLLM table, the work of sim calibrate serving with its
// defaults. It reports simulated rows per second (Fit.RowSimulations).
func BenchmarkCalibrateServing(b *testing.B) {
	path := shareddata.Path(b, "e2e", "closed_loop_vllm.csv")
	rows, err := ReadServing(path)
	if err != nil {
		b.Fatal(err)
	}
	var simulated int
	for b.Loop() {
		fit, err := serving.FitOverheadsSpec(rows, serving.Spec{TrainGPUs: []string{"h100_sxm"}}, serving.Options{})
		if err != nil {
			b.Fatal(err)
		}
		simulated += fit.RowSimulations
	}
	b.ReportMetric(float64(simulated)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCalibrateAIC fits the B200 profile to AIConfigurator's vLLM
// 0.24.0 tables, the work of sim calibrate --aic ... --gpu b200 --engine
// vllm@0.24.0 (reading the Parquet tables included). It reports fitted
// families per second and measured rows per second.
func BenchmarkCalibrateAIC(b *testing.B) {
	db, err := aic.Open(shareddata.Path(b, "aic"))
	if err != nil {
		b.Fatal(err)
	}
	benchCalibrate(b, "b200", AIC{DB: db, System: "b200_sxm", Release: aic.Release{0, 24, 0}})
}
