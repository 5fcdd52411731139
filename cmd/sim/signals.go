package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// Signals that stop a command: each cancels the command's context with an
// *interrupted cause. Every long loop (the engine, sweep probes, calibration
// fits, validation, observe, serve) watches that context; the command then
// removes its temporary files, writes nothing (a sweep writes its partial
// result, marked partial) and the process exits 128 + the signal's number:
// 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as shells and Kubernetes
// expect. A second signal exits at once with the same status.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopGrace is how long a command may take to stop after the first signal
// before the process exits anyway.
const stopGrace = 10 * time.Second

// interrupted is the cancellation cause of a command stopped by a signal.
type interrupted struct{ sig syscall.Signal }

func (i *interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// exitCode is the conventional status of a process ended by the signal.
func (i *interrupted) exitCode() int { return 128 + int(i.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// interruptedBy returns the signal cause of ctx's cancellation, or nil.
func interruptedBy(ctx context.Context) *interrupted {
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return nil
}

// withSignals returns a context cancelled, with an *interrupted cause, by
// the first of stopSignals; exit is called with 128 + the signal's number on
// a second signal or when the command has not returned stopGrace after the
// first. stop releases the signal handlers.
func withSignals(parent context.Context, stderr io.Writer, exit func(code int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		var first *interrupted
		var grace <-chan time.Time
		for {
			select {
			case s := <-ch:
				sig, _ := s.(syscall.Signal)
				in := &interrupted{sig: sig}
				if first != nil {
					fmt.Fprintf(stderr, "sim: %s again: exiting now\n", signalName(sig))
					exit(in.exitCode())
					return
				}
				first = in
				cancel(in)
				grace = time.After(stopGrace)
			case <-grace:
				fmt.Fprintf(stderr, "sim: did not stop within %v of %s: exiting\n", stopGrace, signalName(first.sig))
				exit(first.exitCode())
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruptible runs work and returns its error, or the cancellation cause
// as soon as ctx is cancelled, abandoning work (the process exits right
// after). It is for library calls that take no context yet (calibration and
// validation fits); work must not write files itself, so that abandoning it
// leaves nothing behind.
func interruptible(ctx context.Context, work func() error) error {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// makeInterruptible makes every command under cmds (calibrate and validate,
// whose fits and simulations take no context yet) return as soon as a signal
// cancels its context: the work is abandoned and the process exits with the
// signal's status. Their outputs are written at the end, atomically, so an
// abandoned command leaves no file.
func makeInterruptible(cmds ...*cobra.Command) {
	for _, c := range cmds {
		if run := c.RunE; run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				return interruptible(cmd.Context(), func() error { return run(cmd, args) })
			}
		}
		makeInterruptible(c.Commands()...)
	}
}
