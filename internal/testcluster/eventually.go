package testcluster

import (
	"context"
	"testing"
	"time"
)

// Eventually polls cond every 100ms until it returns nil and fails the test
// with cond's last error once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		if last = cond(ctx); last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not true after %s: %v", what, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
