// Command manager runs the KVStore operator.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		watchNamespaces, metricsAddr, probeAddr, leaderNamespace string
		leaderElect                                              bool
		workers                                                  int
	)
	flag.StringVar(&watchNamespaces, "watch-namespaces", os.Getenv("WATCH_NAMESPACE"),
		"comma-separated namespaces to watch; empty watches all (default $WATCH_NAMESPACE)")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	flag.IntVar(&workers, "workers", 4, "concurrent KVStore reconciles")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kvv1.AddToScheme(scheme); err != nil {
		return err
	}
	cacheOpts := cache.Options{}
	if namespaces := splitNamespaces(watchNamespaces); len(namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "kvstore-operator.kv.opctl.dev",
		LeaderElectionNamespace: leaderNamespace,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if _, err := controller.Setup(mgr, controller.Options{RelatedImage: os.Getenv("RELATED_IMAGE_KVSTORE"), Workers: workers}); err != nil {
		return fmt.Errorf("setting up the KVStore controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.Info("starting", "watchNamespaces", watchNamespaces)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func splitNamespaces(s string) []string {
	var out []string
	for _, ns := range strings.Split(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}
