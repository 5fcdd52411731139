package main

import (
	"context"
	"fmt"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/roofsim/roofsim/serve"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	Addr         string
	MeasureURL   string
	Data         string
	MaxRequests  int
	SimTimeout   time.Duration
	MaxUploadMiB int
	AllowHosts   []string
}

func newServeCmd(s streams, runF func(context.Context, *serveOptions) error) *cobra.Command {
	o := &serveOptions{}
	d := serve.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080] [--measure-url URL] [--data DIR]",
		Short: "Web view: roofline with Kernel Spot Check, simulations, sweeps and validation in the browser",
		Long: `Start the web view: one HTTP server with an embedded page (no network
needed) over the same libraries as the other commands.

  Roofline     catalog or uploaded GPU, per-precision roofs (peak or calibrated),
               ridge points, model prefill/decode phases, Kernel Spot Check
  Simulate     bounded runs of an example or uploaded workload: summary, CDFs,
               timelines, step split, overlay of two runs, downloads
  Sweep        a sim sweep Parquet/CSV result: Pareto front, sortable table
  Validation   a sim validate --json report, or a validation run on data under
               --data: predicted-vs-measured scatter, error tables

It binds to loopback unless --addr says otherwise. It answers only requests
whose Host names it (loopback names, the --addr host and port, --allow-host;
with --addr 0.0.0.0 also the machine's host name and addresses), refuses
state-changing requests from other origins, and cancels a simulation whose
page stopped polling it. With --measure-url, the
Spot Check also times GEMMs on a measurement agent (tools/gpu-agent). Files
are read only from --data. Every flag also reads SIM_<FLAG> (SIM_ADDR,
SIM_DATA, ...). Ctrl-C or SIGTERM stops it.`,
		Example: `  sim serve
  sim serve --addr 127.0.0.1:9000 --data ../shared/data
  ssh -L 8765:127.0.0.1:8765 gpu-box   # agent.py serve runs there
  sim serve --measure-url http://127.0.0.1:8765`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runServe(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "listen address (host:port); a non-loopback host exposes the server to the network")
	f.StringVar(&o.MeasureURL, "measure-url", "", "base URL of a GPU measurement agent (tools/gpu-agent) for measured spot checks")
	f.StringVar(&o.Data, "data", "", "directory the server may read sweep results and validation reports from")
	f.IntVar(&o.MaxRequests, "max-requests", d.MaxRequests, "cap on the requests of one simulation")
	f.DurationVar(&o.SimTimeout, "sim-timeout", d.SimTimeout, "wall-time limit of one simulation")
	f.IntVar(&o.MaxUploadMiB, "max-upload-mib", int(d.MaxUploadBytes>>20), "size limit of a request body (uploads), MiB")
	f.StringSliceVar(&o.AllowHosts, "allow-host", nil, "further host names the browser may reach the server by (the Host header); loopback names and the --addr host are always accepted")
	return cmd
}

func runServe(ctx context.Context, s streams, o *serveOptions) error {
	if o.MaxUploadMiB < 1 || o.MaxUploadMiB > 1024 {
		return fmt.Errorf("--max-upload-mib: must be in [1, 1024], got %d", o.MaxUploadMiB)
	}
	if o.MaxRequests < 1 {
		return fmt.Errorf("--max-requests: must be >= 1, got %d", o.MaxRequests)
	}
	if o.SimTimeout <= 0 {
		return fmt.Errorf("--sim-timeout: must be > 0, got %s", o.SimTimeout)
	}
	srv, err := serve.New(serve.Options{MeasureURL: o.MeasureURL, DataDir: o.Data, MaxRequests: o.MaxRequests,
		SimTimeout: o.SimTimeout, MaxUploadBytes: int64(o.MaxUploadMiB) << 20, Version: version,
		Addr: o.Addr, AllowHosts: o.AllowHosts})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(s.out, "roofsim web view on http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	if !serve.IsLoopback(ln.Addr().String()) {
		fmt.Fprintf(s.errOut, "sim: warning: %s is not a loopback address; anyone who can reach it can use the server\n", ln.Addr())
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(s.out, "stopped")
	return nil
}
