// Command manager runs the webhookenv fixture's controller over the
// namespaces WATCH_NAMESPACE names, and serves its webhooks unless
// ENABLE_WEBHOOKS is "false", as kubebuilder's scaffold does.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func main() {
	opts := ctrl.Options{}
	if ns := os.Getenv("WATCH_NAMESPACE"); ns != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		os.Exit(1)
	}
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		_ = mgr.GetWebhookServer()
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
