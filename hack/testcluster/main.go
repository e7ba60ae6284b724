// Command testcluster starts one shared test control plane and runs a
// command against it, so that every test package of a run attaches to the
// same cluster instead of starting its own:
//
//	go run ./hack/testcluster -- go test ./...
//
// The command sees OPCTL_TEST_KUBECONFIG (see internal/testcluster). When it
// fails, the component logs are dumped, and then the "--- FAIL" blocks of its
// output are printed again, so that a long run's last lines say what failed. Without a command, the cluster runs
// until interrupted, for interactive use with kubectl.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"opctl.dev/opctl/internal/testcluster"
)

func main() { os.Exit(run()) }

func run() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	began := time.Now()
	c, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "testcluster: control plane started in %.1fs\n", time.Since(began).Seconds())

	if len(args) == 0 {
		fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
		fmt.Fprintln(os.Stderr, "testcluster: running until interrupted")
		<-ctx.Done()
		return 0
	}
	cmd := exec.Command(args[0], args[1:]...)
	failures := &failureLog{out: os.Stdout}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, failures, os.Stderr
	cmd.Env = append(os.Environ(), testcluster.EnvKubeconfig+"="+c.Kubeconfig)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	go func() {
		<-ctx.Done()
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}()
	err = cmd.Wait()
	peak := c.PeakMemory()
	fmt.Fprintf(os.Stderr, "testcluster: peak RSS of the control plane processes: %s\n", peak)
	if err == nil {
		return 0
	}
	c.DumpLogs(os.Stderr)
	fmt.Fprint(os.Stderr, failures.summary())
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return exit.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
	return 1
}
