package workload_test

import (
	"fmt"

	"github.com/roofsim/roofsim/workload"
)

func ExampleNewGenerator() {
	spec, err := workload.Parse([]byte(`
seed: 42
clients:
  - name: chat
    arrival: {process: constant, rate: 4, num_requests: 3}
    prefix: {groups: 1, tokens: 100}
    prompt_tokens: {dist: constant, value: 400}
    output_tokens: {dist: constant, value: 50}
  - name: batch
    concurrency: 1
    num_requests: 2
    think_time: 1s
    prompt_tokens: {dist: constant, value: 1000}
    output_tokens: {dist: constant, value: 10}
`), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := workload.NewGenerator(spec, spec.Seed)
	if err != nil {
		fmt.Println(err)
		return
	}
	total, _ := g.Totals()
	fmt.Println("total requests:", total)
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		fmt.Printf("id=%d client=%d t=%.2fs prompt=%d shared=%d\n", r.ID, r.Client, float64(r.ArrivalNS)/1e9, r.PromptTokens, len(r.Segments))
		if r.Client == 1 { // the engine reports the completion 2 s later
			if f, ok := g.OnComplete(r, r.ArrivalNS+2e9); ok {
				fmt.Printf("id=%d client=%d t=%.2fs (closed-loop follow-up)\n", f.ID, f.Client, float64(f.ArrivalNS)/1e9)
			}
		}
	}
	// Output:
	// total requests: 5
	// id=0 client=0 t=0.00s prompt=500 shared=1
	// id=1 client=1 t=0.00s prompt=1000 shared=0
	// id=2 client=1 t=3.00s (closed-loop follow-up)
	// id=3 client=0 t=0.25s prompt=500 shared=1
	// id=4 client=0 t=0.50s prompt=500 shared=1
}
