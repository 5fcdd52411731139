package main

import "github.com/spf13/cobra"

func newRooflineCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "roofline",
		Short: "Roofline analysis of operators and model phases, with plots",
	}
	return cmd
}
