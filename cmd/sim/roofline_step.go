package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/roofline"
	"github.com/spf13/cobra"
)

// stepOptions are the flags of `sim roofline step`.
type stepOptions struct {
	Prefills []string
	Decodes  int
	DecodeKV int
	JSON     bool
}

// maxStepDecodes bounds --decodes: a step never holds more requests than
// the largest max_num_seqs a deployment accepts.
const maxStepDecodes = limits.MaxNumSeqs

func newStepCmd(s streams) *cobra.Command {
	o := &stepOptions{}
	cmd := &cobra.Command{
		Use:   "step --model M --gpu G [--prefill TOKENS[:CACHED]]... [--decodes N --decode-kv L]",
		Short: "One forward pass (prefill chunks and decodes together) priced operator by operator",
		Long: `Price one engine step with the step model sim run uses and list what it
spends its time on: every operator summed over the layers it runs in, its
share of the step, whether it is compute- or memory-bound, the precision its
FLOPs are priced at, and the rates its priced time implies.

--prefill TOKENS[:CACHED] adds a prefill chunk of TOKENS new prompt tokens on
top of CACHED tokens already in the KV cache (repeat it for several chunks;
the LM head runs for one token of each). --decodes N adds N decoding requests,
each attending --decode-kv tokens of KV (its new token included). A step with
both is a mixed step of chunked prefill.`,
		Example: `  sim roofline step --model llama-3.1-8b --gpu h200 --weights fp8 --kv-cache-dtype fp8 \
    --prefill 1000 --decodes 111 --decode-kv 1050`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStep(cmd, s, o) },
	}
	addSettingFlagsOnly(cmd, phaseSettings...)
	f := cmd.Flags()
	f.StringArrayVar(&o.Prefills, "prefill", nil, "prefill chunk TOKENS[:CACHED] (repeatable)")
	f.IntVar(&o.Decodes, "decodes", 0, "decoding requests in the step")
	f.IntVar(&o.DecodeKV, "decode-kv", 1024, "KV tokens each decode attends, its new token included")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

// stepInput builds the step of o's flags, or an error naming the flag.
func (o *stepOptions) stepInput() (*roofline.StepInput, error) {
	in := &roofline.StepInput{}
	for _, p := range o.Prefills {
		ch, err := parseChunk(p)
		if err != nil {
			return nil, fmt.Errorf("--prefill %q: %w", p, err)
		}
		in.Prefills = append(in.Prefills, ch)
	}
	if o.Decodes < 0 || o.Decodes > maxStepDecodes {
		return nil, fmt.Errorf("--decodes: must be in [0, %d], got %d", maxStepDecodes, o.Decodes)
	}
	if o.DecodeKV < 1 || o.DecodeKV > limits.MaxTokens {
		return nil, fmt.Errorf("--decode-kv: must be in [1, %d], got %d", limits.MaxTokens, o.DecodeKV)
	}
	if len(in.Prefills) == 0 && o.Decodes == 0 {
		return nil, fmt.Errorf("--prefill or --decodes: the step is empty; give a prefill chunk or decodes")
	}
	in.Decodes = make([]int, o.Decodes)
	for i := range in.Decodes {
		in.Decodes[i] = o.DecodeKV
	}
	return in, nil
}

// parseChunk reads TOKENS[:CACHED]: TOKENS >= 1 new tokens on top of
// CACHED >= 0 cached ones; the chunk samples (it ends its prompt).
func parseChunk(s string) (roofline.Chunk, error) {
	tok, cached, hasCached := strings.Cut(s, ":")
	t, err := strconv.Atoi(strings.TrimSpace(tok))
	if err != nil || t < 1 || t > limits.MaxTokens {
		return roofline.Chunk{}, fmt.Errorf("tokens must be an integer in [1, %d]", limits.MaxTokens)
	}
	c := 0
	if hasCached {
		if c, err = strconv.Atoi(strings.TrimSpace(cached)); err != nil || c < 0 || c > limits.MaxTokens-t {
			return roofline.Chunk{}, fmt.Errorf("cached must be an integer in [0, %d]", limits.MaxTokens-t)
		}
	}
	return roofline.Chunk{Tokens: t, Cached: c, Sampled: true}, nil
}

func runStep(cmd *cobra.Command, s streams, o *stepOptions) error {
	in, err := o.stepInput()
	if err != nil {
		return err
	}
	step, sp, err := settingsStepModel(cmd)
	if err != nil {
		return err
	}
	r := step.Report(in)
	if o.JSON {
		return writeJSON(s.out, r)
	}
	opts := step.Options()
	g := step.GPU()
	fmt.Fprintf(s.out, "%s on %s, tp %d, weights %s, activations %s, kv %s, GPU profile %s\n", step.Model().Name, g.Name, sp.TP,
		opts.WeightDType, opts.ActDType, opts.KVDType, pipeline.ProfileLabel(g.EffectiveProfile()))
	fmt.Fprintf(s.out, "step: %d prefill chunks, %d decodes (KV %d), %d new tokens\n", len(in.Prefills), len(in.Decodes), o.DecodeKV, r.Tokens)
	tw := newTable(s.out)
	fmt.Fprintln(tw, "OP\tKIND\tCOUNT\tTIME\tSHARE %\tBOUND\tPRECISION\tFLOPS\tBYTES\tFLOP/S\tBYTES/S")
	for _, op := range r.Ops {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", op.Name, op.Kind, op.Count, fmtTime(op.Seconds), fmtF(op.SharePct, 1),
			dash(op.Bound), dash(op.ComputePrecision), fmtSI(op.FLOPs, "FLOP"), fmtSI(op.Bytes, "B"),
			fmtSI(op.AchievedTFLOPS*1e12, "FLOP/s"), fmtSI(op.AchievedGBps*1e9, "B/s"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := r.Cost
	_, err = fmt.Fprintf(s.out, "total %s: compute-bound %s, memory-bound %s, all-reduce %s, launches and engine costs %s\n",
		fmtTime(c.Seconds), fmtTime(c.ComputeS), fmtTime(c.MemoryS), fmtTime(c.CommS), fmtTime(c.OverheadS))
	return err
}

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
