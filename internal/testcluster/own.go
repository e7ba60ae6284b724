package testcluster

import (
	"context"
	"strings"
	"testing"
)

// RequireOwn starts a control plane of the test's own, for a test that
// would disturb the shared one (an APIService that nothing serves, a
// killed etcd), and stops it when the test ends, after writing the tail
// of the component logs to the test log if the test failed. Like Require
// it skips the test with OPCTL_SKIP_CLUSTER=1 and otherwise fails it when
// no control plane can be started; it never brings up the shared one.
func RequireOwn(t testing.TB, opts Options) *Cluster {
	t.Helper()
	skipInUnitMode(t)
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("testcluster: a control plane of the test's own: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.DumpLogs(logWriter{t})
		}
		c.Stop()
	})
	return c
}

// logWriter writes to a test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
