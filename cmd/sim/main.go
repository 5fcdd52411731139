// Command sim is roofsim's command-line interface: simulate an LLM serving
// deployment (run), analyse operators and phases on a roofline (roofline),
// fit and check GPU profiles (calibrate, validate) and plan capacity (sweep).
package main

import (
	"context"
	"os"
)

func main() {
	ctx, stop := withSignals(context.Background(), os.Stderr, os.Exit)
	code := execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
