package testcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/go-logr/logr"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// logOnce sets controller-runtime's logger once per test binary: errors
// only, on stderr.
var logOnce sync.Once

// StartManager starts a controller-runtime manager on the cluster for
// in-process controller tests. opts needs a Scheme; a Cache that selects
// only the suite's objects keeps test packages sharing a cluster apart.
// The manager's requests carry userAgent, so the audit log tells its
// writes apart. register adds the controllers before the start. The
// returned stop function stops the manager and waits for it.
func (c *Cluster) StartManager(opts ctrl.Options, userAgent string, register func(ctrl.Manager) error) (stop func(), err error) {
	return c.StartManagerAs(c.Config, opts, userAgent, register)
}

// StartManagerAs is StartManager with the identity of base (for example
// a ServiceAccount's token, so that the controller runs with the RBAC it
// is installed with, not as an admin).
func (c *Cluster) StartManagerAs(base *rest.Config, opts ctrl.Options, userAgent string, register func(ctrl.Manager) error) (stop func(), err error) {
	logOnce.Do(func() {
		ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	})
	cfg := rest.CopyConfig(base)
	cfg.UserAgent = userAgent
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := register(mgr); err != nil {
		return nil, fmt.Errorf("registering controllers: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "manager %s: %v\n", userAgent, err)
		}
	}, nil
}
