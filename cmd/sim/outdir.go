package main

import (
	"io"
	"os"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// outputDir is sim run's --out directory: traces stream into a staged
// directory (stage.go) that is published with run.json only when the run
// succeeds, so a failed or interrupted run leaves no file and no directory.
type outputDir struct {
	dir    string // the target, as given
	format traces.Format
	stagedRequests
	stepF *os.File
	stepW traces.StepWriter
	// pools is request_pools.csv, written for a disaggregated run only.
	pools poolTrace
}

// stagedRequests is a staged --out directory with requests.<fmt> open in
// it: what sim run and sim observe both write first.
type stagedRequests struct {
	stage *stagedDir
	reqF  *os.File
	reqW  traces.RequestWriter
}

// stageRequests stages dir (see stageDir: a non-empty dir is refused unless
// overwrite is set and it holds results) and opens requests.<f> with its
// writer. On error nothing is left staged.
func stageRequests(dir string, f traces.Format, overwrite bool) (stagedRequests, error) {
	st, err := stageDir("--out", dir, overwrite)
	if err != nil {
		return stagedRequests{}, err
	}
	reqF, err := st.create("requests." + string(f))
	if err != nil {
		st.abort()
		return stagedRequests{}, err
	}
	reqW, err := traces.NewRequestWriter(reqF, f)
	if err != nil {
		reqF.Close()
		st.abort()
		return stagedRequests{}, err
	}
	return stagedRequests{stage: st, reqF: reqF, reqW: reqW}, nil
}

var _ sim.Sink = (*outputDir)(nil)

// openOutputDir stages dir (see stageRequests) and opens the trace
// writers.
func openOutputDir(dir string, f traces.Format, steps, overwrite bool) (*outputDir, error) {
	sr, err := stageRequests(dir, f, overwrite)
	if err != nil {
		return nil, err
	}
	o := &outputDir{dir: dir, format: f, stagedRequests: sr}
	if steps {
		if o.stepF, err = o.stage.create("steps." + string(f)); err != nil {
			o.abort()
			return nil, err
		}
		if o.stepW, err = traces.NewStepWriter(o.stepF, f); err != nil {
			o.abort()
			return nil, err
		}
	}
	return o, nil
}

func (o *outputDir) Request(r *traces.RequestRecord) error {
	if r.Pool != nil {
		if err := o.pools.write(o.stage, r); err != nil {
			return err
		}
	}
	return o.reqW.Write(r)
}

func (o *outputDir) Step(r *traces.StepRecord) error {
	if o.stepW == nil {
		return nil
	}
	return o.stepW.Write(r)
}

// commit finishes the traces, writes run.json and publishes the directory.
func (o *outputDir) commit(rec pipeline.Record) error {
	if err := o.reqW.Close(); err != nil {
		return err
	}
	if err := o.reqF.Close(); err != nil {
		return err
	}
	o.reqF = nil
	if o.stepW != nil {
		if err := o.stepW.Close(); err != nil {
			return err
		}
		if err := o.stepF.Close(); err != nil {
			return err
		}
		o.stepF = nil
	}
	if err := o.pools.close(); err != nil {
		return err
	}
	if err := o.stage.writeFile(resultsMarker, func(w io.Writer) error { return writeJSON(w, rec) }); err != nil {
		return err
	}
	return o.stage.publish()
}

// abort closes the writers and removes everything staged (a no-op after a
// successful commit).
func (o *outputDir) abort() {
	for _, f := range []*os.File{o.reqF, o.stepF, o.pools.f} {
		if f != nil {
			f.Close()
		}
	}
	o.stage.abort()
}
