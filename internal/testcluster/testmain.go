package testcluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Environment variables that steer Main.
const (
	// EnvKubeconfig names the admin kubeconfig of a running test control
	// plane to attach to instead of starting one.
	EnvKubeconfig = "OPCTL_TEST_KUBECONFIG"
	// EnvSkip, set to 1, makes Require skip cluster tests.
	EnvSkip = "OPCTL_SKIP_CLUSTER"
)

// Setup prepares a package's tests on the cluster (CRDs, a manager) and
// returns a function that undoes what must not outlive the tests.
type Setup func(*Cluster) (teardown func(), err error)

// Main starts or attaches to a control plane, stores it in *cluster, runs
// the setups and the tests, and stops the cluster. When tests fail on a
// cluster it started, it dumps the component logs. It returns the exit code
// for os.Exit.
func Main(m *testing.M, cluster **Cluster, setups ...Setup) int {
	if os.Getenv(EnvSkip) == "1" {
		return m.Run()
	}
	var (
		c   *Cluster
		err error
	)
	began := time.Now()
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		c, err = Attach(kc)
	} else {
		c, err = Start(context.Background(), Options{})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	if !c.Attached() {
		fmt.Fprintf(os.Stderr, "testcluster: control plane started in %.1fs\n", time.Since(began).Seconds())
	}
	*cluster = c
	for _, setup := range setups {
		teardown, err := setup(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testcluster: setup: %v\n", err)
			c.Stop()
			return 1
		}
		defer teardown()
	}
	code := m.Run()
	for _, check := range afterTests {
		if code != 0 {
			break
		}
		if err := check(c); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: after the tests: %v\n", err)
			code = 1
		}
	}
	if !c.Attached() {
		fmt.Fprintf(os.Stderr, "testcluster: peak RSS of the control plane processes: %s\n", c.PeakMemory())
		if code != 0 {
			c.DumpLogs(os.Stderr)
		}
	}
	c.Stop()
	return code
}

// afterTests are the checks AfterTests registered.
var afterTests []func(*Cluster) error

// AfterTests registers a check of what the package's tests did as a
// whole (a setup calls it), run by Main once they all passed: its error
// fails the package.
func AfterTests(check func(*Cluster) error) {
	afterTests = append(afterTests, check)
}

// Require returns c for a test that needs the control plane. It skips the
// test only when OPCTL_SKIP_CLUSTER=1; otherwise a nil c fails it.
func Require(t testing.TB, c *Cluster) *Cluster {
	t.Helper()
	if c != nil {
		return c
	}
	if os.Getenv(EnvSkip) == "1" {
		t.Skip(EnvSkip + "=1: skipping a test that needs the test control plane")
	}
	t.Fatal("testcluster: no control plane; call testcluster.Main from TestMain")
	return nil
}
