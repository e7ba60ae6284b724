package testcluster

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Restart kills the control plane process name (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler or kwok) with SIGKILL, as a
// crash would, keeps it down for down, starts it again with the same
// arguments and waits until the API server is ready. The new process logs
// to <name>.restart-<n>.log.
func (c *Cluster) Restart(ctx context.Context, name string, down time.Duration) error {
	if c.attached {
		return fmt.Errorf("restarting %s: the cluster belongs to another process", name)
	}
	for i, p := range c.procs {
		if component, _, _ := strings.Cut(p.name, ".restart-"); component != name {
			continue
		}
		_ = p.cmd.Process.Kill()
		<-p.done
		p.logFile.Close()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(down):
		}
		c.restarts++
		np, err := startProcess(fmt.Sprintf("%s.restart-%d", name, c.restarts), p.bin, p.args, c.LogDir(), p.env)
		if err != nil {
			return err
		}
		c.procs[i] = np
		ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		return c.waitFor(ctx, "kube-apiserver /readyz after restarting "+name, func(ctx context.Context) error {
			return c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		})
	}
	return fmt.Errorf("restarting %s: no such process", name)
}
