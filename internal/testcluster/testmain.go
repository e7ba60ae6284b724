package testcluster

import (
	"context"
	"fmt"
	"os"
	"sync"
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

// shared is the test binary's one control plane: Main registers where it
// goes and how to set it up, the first Require brings it up, and Main
// takes it down after the tests.
var shared struct {
	once sync.Once
	// registered is true once Main runs.
	registered bool
	target     **Cluster
	setups     []Setup
	// cluster, teardowns and err are what the first Require left.
	cluster   *Cluster
	teardowns []func()
	err       error
}

// Main runs the package's tests and returns the exit code for os.Exit.
// It starts no control plane itself: the first Require starts one (or
// attaches to OPCTL_TEST_KUBECONFIG), stores it in *cluster and runs the
// setups, so a run of tests that need none never starts one. After the
// tests Main undoes the setups and stops the cluster, if there was one;
// when tests failed on a cluster it started, it dumps the component logs.
func Main(m *testing.M, cluster **Cluster, setups ...Setup) int {
	shared.registered, shared.target, shared.setups = true, cluster, setups
	code := m.Run()
	c := shared.cluster
	if c == nil {
		return code
	}
	for _, check := range afterTests {
		if code != 0 {
			break
		}
		if err := check(c); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: after the tests: %v\n", err)
			code = 1
		}
	}
	for i := len(shared.teardowns) - 1; i >= 0; i-- {
		shared.teardowns[i]()
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

// bringUp starts or attaches to the control plane and runs the setups;
// a failure stops what it started and is kept for every Require.
func bringUp() {
	began := time.Now()
	var (
		c   *Cluster
		err error
	)
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		c, err = Attach(kc)
	} else {
		c, err = Start(context.Background(), Options{})
	}
	if err != nil {
		shared.err = err
		return
	}
	if !c.Attached() {
		fmt.Fprintf(os.Stderr, "testcluster: control plane started in %.1fs\n", time.Since(began).Seconds())
	}
	for _, setup := range shared.setups {
		teardown, err := setup(c)
		if err != nil {
			for i := len(shared.teardowns) - 1; i >= 0; i-- {
				shared.teardowns[i]()
			}
			shared.teardowns = nil
			c.Stop()
			shared.err = fmt.Errorf("setup: %w", err)
			return
		}
		shared.teardowns = append(shared.teardowns, teardown)
	}
	shared.cluster = c
	*shared.target = c
}

// afterTests are the checks AfterTests registered.
var afterTests []func(*Cluster) error

// AfterTests registers a check of what the package's tests did as a
// whole (a setup calls it), run by Main once they all passed: its error
// fails the package. It runs only when a test brought the cluster up.
func AfterTests(check func(*Cluster) error) {
	afterTests = append(afterTests, check)
}

// Require is the one gate of a test that needs the test control plane:
// it returns the test binary's shared cluster, which the first call
// starts (or attaches to) and sets up, and which it also stores in the
// variable Main was given. Call it before touching that variable or
// anything a setup made. The argument is that variable, which names the
// cluster the test needs at the call site; its value is not read. With
// OPCTL_SKIP_CLUSTER=1 (make test-unit) Require skips the test and says
// why; otherwise no cluster fails the test and nothing skips.
func Require(t testing.TB, _ *Cluster) *Cluster {
	t.Helper()
	skipInUnitMode(t)
	if !shared.registered {
		t.Fatal("testcluster: no control plane; call testcluster.Main from TestMain")
	}
	shared.once.Do(bringUp)
	if shared.err != nil {
		t.Fatalf("testcluster: %v", shared.err)
	}
	return shared.cluster
}

// skipInUnitMode skips a cluster test, with the reason, when
// OPCTL_SKIP_CLUSTER=1.
func skipInUnitMode(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvSkip) == "1" {
		t.Skip(EnvSkip + "=1 (make test-unit): skipping a test that needs the test control plane")
	}
}
