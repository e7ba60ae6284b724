// Command manager runs the KVStore operator, and the data-path programs
// its Jobs and init containers run: manager backup and manager restore.
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
	"opctl.dev/opctl/operators/sample/internal/instance"
)

func main() {
	cmd, args := "manager", os.Args[1:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "manager":
		err = run(args)
	case "backup":
		err = backup(args)
	case "restore":
		err = restore(args)
	default:
		err = fmt.Errorf("unknown command %q: use manager (the default), backup or restore", cmd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", cmd, err)
		terminationMessage(err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	var (
		watchNamespaces, metricsAddr, probeAddr, leaderNamespace string
		exporterImage, toolsImage                                string
		leaderElect, dataPath                                    bool
		workers                                                  int
	)
	flag.StringVar(&watchNamespaces, "watch-namespaces", os.Getenv("WATCH_NAMESPACE"),
		"comma-separated namespaces to watch; empty watches all (default $WATCH_NAMESPACE)")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	flag.IntVar(&workers, "workers", 4, "concurrent KVStore reconciles")
	flag.StringVar(&exporterImage, "exporter-image", os.Getenv("RELATED_IMAGE_EXPORTER"),
		"the metrics sidecar's image (default $RELATED_IMAGE_EXPORTER, else "+controller.DefaultExporterImage+")")
	flag.StringVar(&toolsImage, "tools-image", os.Getenv("RELATED_IMAGE_TOOLS"),
		"the image whose /manager runs backups and restores: this operator's own (default $RELATED_IMAGE_TOOLS)")
	flag.BoolVar(&dataPath, "data-path", true, "read and steer the servers: failover, replica resync and autoscaling")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	// flag.CommandLine holds controller-runtime's --kubeconfig too.
	if err := flag.CommandLine.Parse(args); err != nil {
		return err
	}
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
	opts := controller.Options{RelatedImage: os.Getenv("RELATED_IMAGE_KVSTORE"), ExporterImage: exporterImage, ToolsImage: toolsImage, Workers: workers}
	if dataPath {
		opts.DataPath = &controller.DataPath{Manager: instance.RESP{}}
	}
	if _, err := controller.Setup(mgr, opts); err != nil {
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
