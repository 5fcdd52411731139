package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
	"github.com/roofsim/roofsim/workload"
)

// The 16 open-loop inference-perf runs resolve to the server they drove
// (exp-config.yaml: the model in the catalog, its TP, max_model_len 4096,
// max_num_batched_tokens 2048, max_num_seqs 128) with a KV cache that holds a
// whole max_model_len request, so no request the real server served is
// refused for its size. The Llama-2-7B codegen run, whose profile.yaml used
// to lose 8,800 of its requests to the context limit, is simulated end to
// end: all 9,000 requests arrive and none is rejected.
func TestInferencePerfOpenLoopRunsResolve(t *testing.T) {
	root := shareddata.Path(t, "e2e", "open_loop_vllm_h100")
	runs, err := filepath.Glob(filepath.Join(root, "*", "profile.yaml"))
	if err != nil || len(runs) != 16 {
		t.Fatalf("%d runs (%v); want 16", len(runs), err)
	}
	want := map[string]bool{"llama-2-7b": true, "llama-2-70b": true, "codellama-34b": true, "mixtral-8x7b": true}
	for _, path := range runs {
		sp, err := workload.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(sp, Options{Workload: path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sc := p.Config.Scheduler
		if !want[p.Model.Name] || sc.MaxModelLen != 4096 || sc.MaxNumBatchedTokens != 2048 || sc.MaxNumSeqs != 128 || !sc.EnablePrefixCaching {
			t.Errorf("%s: model %s, scheduler %+v", path, p.Model.Name, sc)
		}
		if sc.NumGPUBlocks*sc.BlockSize < sc.MaxModelLen {
			t.Errorf("%s: %d KV tokens cannot hold one request of max_model_len %d", path, sc.NumGPUBlocks*sc.BlockSize, sc.MaxModelLen)
		}
	}
	if testing.Short() {
		return
	}
	path := filepath.Join(root, "20260217-155451-llama-2-7b-tp1-codegen", "profile.yaml")
	sp, err := workload.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(sp, Options{Workload: path})
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Run(context.Background(), src, nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := o.Sim; r.Arrived != 9000 || r.Rejected != 0 || r.Completed != 9000 {
		t.Errorf("arrived %d, rejected %d, completed %d; want 9000, 0, 9000", r.Arrived, r.Rejected, r.Completed)
	}
}
