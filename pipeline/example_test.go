package pipeline_test

import (
	"context"
	"fmt"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/workload"
)

// One run from a workload file to its record: resolve, generate, run,
// record.
func Example() {
	sp, err := workload.Load("../examples/chat.yaml")
	if err != nil {
		panic(err)
	}
	p, err := pipeline.Resolve(sp, pipeline.Options{Workload: "chat.yaml"})
	if err != nil {
		panic(err)
	}
	src, err := p.Source()
	if err != nil {
		panic(err)
	}
	o, err := p.Run(context.Background(), src, nil, pipeline.RunOptions{})
	if err != nil {
		panic(err)
	}
	rec := p.Record(o, "dev")
	fmt.Printf("%s on %s: %d of %d requests completed\n", rec.Config.Model, rec.Config.GPU, rec.Counters.Completed, rec.Counters.Arrived)
	// Output: llama-3.1-8b on h100: 2000 of 2000 requests completed
}
