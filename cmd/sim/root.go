package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// version is the roofsim release; overridden at link time with -X.
var version = "0.1.0-dev"

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // bad input or a failed run
	exitUsage = 2 // unknown command or flag
)

// usageError marks errors in the command line itself (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// streams are a command's standard streams and the arguments the CLI was
// run with (commands read these, never os.Args).
type streams struct {
	in          io.Reader
	out, errOut io.Writer
	args        []string
}

// commandLine is the command as typed, for provenance notes in outputs:
// "sim calibrate --gpu h100 ...".
func (s streams) commandLine() string { return strings.TrimSpace("sim " + strings.Join(s.args, " ")) }

// execute runs the CLI with args and returns the process exit code. Errors
// are printed as one line on stderr: "sim: <what>: <why>".
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := streams{in: stdin, out: stdout, errOut: stderr, args: args}
	root := newRootCmd(s)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	// A command stopped by a signal exits 128 + its number (signals.go), also
	// when it stopped gracefully (sim serve).
	if in := interruptedBy(ctx); in != nil {
		fmt.Fprintf(stderr, "sim: %s\n", in)
		return in.exitCode()
	}
	if err == nil {
		return exitOK
	}
	// An error may quote input (a name, a path): its control characters
	// are escaped so that none reaches the terminal.
	msg := termSafe(strings.TrimSpace(err.Error()), "\n\t")
	fmt.Fprintf(stderr, "sim: %s\n", msg)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "sim",
		Short: "roofsim: simulate LLM inference serving on a roofline step model",
		Long: `roofsim predicts how a vLLM-style server behaves on a given GPU, model and
parallelism, without a GPU: latency percentiles, throughput, KV-cache use,
and which operators are memory- or compute-bound.

Configuration precedence: flags > environment (SIM_<FLAG>, e.g. SIM_TP=2)
> workload/config file > built-in defaults.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// Every command's unset flags take their SIM_<FLAG> values.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return applyEnv(cmd) },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{parseFlagError(err)} })
	root.AddCommand(
		newGPUsCmd(s, nil),
		newModelsCmd(s, nil),
		newRooflineCmd(s),
		newRunCmd(s, nil),
		newSweepCmd(s, nil),
		newCalibrateCmd(s),
		newValidateCmd(s),
		newServeCmd(s, nil),
		newObserveCmd(s, nil),
		newCompareCmd(s, nil),
		newVersionCmd(s),
		newResultsPlotCmd(s),
	)
	attachCalibrateObserved(root, s)
	strictNumbers(root)
	// Commands whose work takes no context (fits, validations, reading
	// large traces or ops files) return at the first signal; run, sweep,
	// observe and serve stop through their context themselves.
	for _, c := range root.Commands() {
		switch c.Name() {
		case "calibrate", "validate", "roofline", "compare", "plot":
			makeInterruptible(c) // signals.go
		}
	}
	return root
}
