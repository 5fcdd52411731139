package main

import (
	"context"
	"errors"
	"testing"
)

// interruptible returns the cancellation cause of an already cancelled
// context while its work is still blocked, and the work's own error when the
// context stays live: promptness without a wall-clock bound.
func TestInterruptibleReturnsTheCause(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stop := errors.New("interrupted by a test")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if err := interruptible(ctx, func() error { <-release; return nil }); !errors.Is(err, stop) {
		t.Errorf("cancelled: %v, want the cause", err)
	}
	failed := errors.New("work failed")
	if err := interruptible(context.Background(), func() error { return failed }); !errors.Is(err, failed) {
		t.Errorf("live: %v, want the work's error", err)
	}
}
