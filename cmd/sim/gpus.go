package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/spf13/cobra"
)

type gpusOptions struct {
	JSON bool
}

func newGPUsCmd(s streams, runF func(*gpusOptions) error) *cobra.Command {
	opts := &gpusOptions{}
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPU catalog: peaks, bandwidth, memory, profile",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runGPUs(s, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the catalog as JSON")
	return cmd
}

var precisionOrder = []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}

func runGPUs(s streams, opts *gpusOptions) error {
	gpus := hardware.List()
	if opts.JSON {
		return writeJSON(s.out, gpus)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "NAME\tARCH\tMEMORY\tBANDWIDTH\tINTERCONNECT\tL2\tDENSE TFLOPS\tPROFILE\tDESCRIPTION")
	for i := range gpus {
		g := &gpus[i]
		var peaks []string
		keys := make([]string, 0, len(g.PeakTFLOPS))
		for k := range g.PeakTFLOPS {
			keys = append(keys, k)
		}
		sort.SliceStable(keys, func(a, b int) bool { return precIndex(keys[a]) < precIndex(keys[b]) })
		for _, k := range keys {
			peaks = append(peaks, fmt.Sprintf("%s %g", k, g.PeakTFLOPS[k]))
		}
		p := g.EffectiveProfile()
		prof := "default"
		if p.Calibrated {
			prof = p.Status().String() // calibrated or borrowed:<gpu>
			if p.Engine != "" {
				prof += " (" + p.Engine + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%g GiB\t%g GB/s\t%g GB/s\t%g MiB\t%s\t%s\t%s\n",
			g.Name, g.Arch, g.MemoryGiB, g.MemoryBandwidthGBps, g.InterconnectGBps, g.L2MiB,
			strings.Join(peaks, ", "), prof, g.Description)
	}
	return tw.Flush()
}

func precIndex(k string) int {
	for i, p := range precisionOrder {
		if p == k {
			return i
		}
	}
	return len(precisionOrder)
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", cmd.CommandPath(), args[0])}
	}
	return nil
}
