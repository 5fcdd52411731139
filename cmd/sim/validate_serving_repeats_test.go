package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate serving counts one benchmark run once: a row repeating an
// earlier row's configuration and measured TTFT and TPOT (the same run
// exported twice, only id and source differing) is left out of the rows and
// the statistics, and the report says how many were. A second run of the
// configuration (other measured values) stays. The rows are hand-written,
// synthetic latencies.
func TestValidateServingCountsRepeatedRunOnce(t *testing.T) {
	header := "id,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms,silicon_data_source\n"
	row := func(id, ttft, source string) string {
		return strings.Join([]string{id, "vllm", "0.18.0", "llama-3.1-8b", "h100_sxm", "bf16", "agg", "512", "32", "bf16", "bf16", "2", "1", "1", "1", "1", "1", ttft, "7", source}, ",") + "\n"
	}
	file := filepath.Join(t.TempDir(), "repeats.csv")
	body := header + row("a", "40", "db") + row("b", "40", "export") + row("c", "41", "db")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "validate", "serving", "--file", file, "--requests-per-client", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	var rep struct {
		Rows         []json.RawMessage `json:"rows"`
		RepeatedRows int               `json:"repeated_rows"`
		TTFT         struct{ N int }   `json:"ttft"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.RepeatedRows != 1 || rep.TTFT.N != 2 {
		t.Fatalf("rows %d, repeated %d, ttft n %d; want 2, 1, 2", len(rep.Rows), rep.RepeatedRows, rep.TTFT.N)
	}
	code, out, errOut = cli(t, "validate", "serving", "--file", file, "--requests-per-client", "2")
	if code != 0 || !strings.Contains(out, "left out 1 rows repeating") {
		t.Fatalf("exit %d, text report lacks the repeat line:\n%s\n%s", code, out, errOut)
	}
}
