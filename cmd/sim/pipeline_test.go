package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/workload"
)

// sim run is an adapter of the run pipeline: for the same spec its --json
// summary and its run.json are the library's, byte for byte.
func TestRunMatchesPipeline(t *testing.T) {
	const path = "../../examples/chat.yaml"
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := cli(t, "run", "--workload", path, "--json", "-q", "--out", dir)
	if code != 0 {
		t.Fatal(errOut)
	}
	sp, err := workload.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Resolve(sp, pipeline.Options{Workload: path})
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Run(context.Background(), src, nil, pipeline.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want, wantRec bytes.Buffer
	if err := writeJSON(&want, o.Result); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Errorf("sim run --json differs from the pipeline's result:\n%s\n%s", out, want.String())
	}
	if err := writeJSON(&wantRec, p.Record(o, version)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantRec.Bytes()) {
		t.Errorf("run.json differs from the pipeline's record:\n%s\n%s", got, wantRec.Bytes())
	}
}
