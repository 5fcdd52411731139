package serving

// Row is one measured closed-loop serving benchmark: Concurrency
// clients each sending a request of ISL prompt tokens and OSL output tokens
// as soon as their previous one finishes, with the measured mean TTFT and
// TPOT in milliseconds.
type Row struct {
	ID          string
	Line        int
	Model       string // as written, e.g. "meta-llama/Llama-3.1-70B"
	GPU         string // as written, e.g. "h100_sxm"
	Precision   string // weight precision, e.g. "fp8"
	ISL, OSL    int
	Concurrency int
	TP          int
	TTFTms      float64
	TPOTms      float64
}
