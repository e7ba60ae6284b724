package testcluster

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// StartManager starts a controller-runtime manager on the cluster for
// in-process controller tests. Its requests carry userAgent, so the audit
// log tells its writes apart. register adds the controllers before the
// start. The returned stop function stops the manager and waits for it.
func (c *Cluster) StartManager(scheme *runtime.Scheme, userAgent string, register func(ctrl.Manager) error) (stop func(), err error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.UserAgent = userAgent
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
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
