package traces_test

import (
	"fmt"
	"os"

	"github.com/roofsim/roofsim/traces"
)

func ExampleCollector() {
	c := traces.NewCollector([]string{"chat"})
	for i, out := range []int{5, 9, 1} {
		r := traces.RequestRecord{
			ID: uint64(i), Client: "chat", ArrivalS: float64(i),
			FirstScheduledS: float64(i), FirstTokenS: float64(i) + 0.1,
			FinishS:      float64(i) + 0.1 + 0.02*float64(out-1),
			PromptTokens: 100, OutputTokens: out, Status: traces.StatusOK,
		}
		r.FillLatencies()
		c.AddRequest(&r)
	}
	s := c.Summary()
	fmt.Printf("completed %d in %.2f s: %.3f req/s, %.2f output tok/s\n", s.Completed, s.DurationS, s.ThroughputRPS, s.OutputTokensPerS)
	fmt.Printf("TTFT mean %.1f ms, TPOT mean %.1f ms over %d requests\n", s.TTFTms.Mean, s.TPOTms.Mean, s.TPOTms.Count)
	// Output:
	// completed 3 in 2.10 s: 1.429 req/s, 7.14 output tok/s
	// TTFT mean 100.0 ms, TPOT mean 20.0 ms over 2 requests
}

func ExampleNewRequestWriter() {
	w, err := traces.NewRequestWriter(os.Stdout, traces.CSV)
	if err != nil {
		panic(err)
	}
	r := traces.RequestRecord{ID: 1, Client: "chat", ArrivalS: 0.5, FirstScheduledS: 0.5, FirstTokenS: 0.55, FinishS: 0.55,
		PromptTokens: 12, OutputTokens: 1, Status: traces.StatusOK}
	r.FillLatencies()
	_ = w.Write(&r)
	_ = w.Close()
	// Output:
	// id,client,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_tokens,cached_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,queue_ms,preemptions,replica,status
	// 1,chat,0.5,0.5,0.55,0.55,12,0,1,50.00000000000004,,50.00000000000004,0,0,0,ok
}
