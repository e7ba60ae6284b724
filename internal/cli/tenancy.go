package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"opctl.dev/opctl/pkg/sharding"
	"opctl.dev/opctl/pkg/tenancy"
)

func newTenancyCommand(g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenancy",
		Short: "The tenancy controller: per-tenant namespaces, quota, isolation and operator instances",
	}
	run, _ := newTenancyRunCommand(g)
	cmd.AddCommand(run, newTenancyCheckCommand(g))
	return cmd
}

// envOr returns the environment variable key, or def when it is empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// hostname is the host name, or "" when it cannot be read.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// TenancyRunOptions parses args as `opctl tenancy run` does and returns
// the controller options they set: tests read the arguments of
// charts/opctl's Deployment with it, so that the controller they run is
// the one the chart runs.
func TenancyRunOptions(args []string) (tenancy.Options, error) {
	cmd, opts := newTenancyRunCommand(&GlobalOptions{})
	if err := cmd.Flags().Parse(args); err != nil {
		return tenancy.Options{}, fmt.Errorf("opctl tenancy run %v: %w", args, err)
	}
	return *opts, nil
}

func newTenancyRunCommand(g *GlobalOptions) (*cobra.Command, *tenancy.Options) {
	var (
		opts                                    = &tenancy.Options{}
		metricsAddr, probeAddr, pprofAddr, leNS string
		leaderElect, shards                     bool
		shard                                   sharding.Options
		traceFile, shardSelector                string
		qps                                     float32
		burst                                   int
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the tenancy controller against the cluster of --kubeconfig",
		Long: `run starts the Tenant controller (a controller-runtime manager) and blocks
until it is stopped. It needs the Tenant and TenantProfile CRDs (config/crd)
and the permissions in config/rbac; docs in README.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.RESTConfig()
			if err != nil {
				return err
			}
			cfg.QPS, cfg.Burst = qps, burst
			cfg.UserAgent = "opctl-tenancy"
			ctrl.SetLogger(g.Logger())
			leaderID := "tenancy.opctl.dev"
			if shards {
				// Every replica is a shard; the leader is also the sharder.
				if shard.Namespace = leNS; shard.Namespace == "" {
					shard.Namespace = opts.StorageNamespace
				}
				if shard.Trace, err = traceTo(traceFile, shard.ID); err != nil {
					return err
				}
				if shardSelector != "" {
					if shard.Selector, err = labels.Parse(shardSelector); err != nil {
						return fmt.Errorf("--shard-selector: %w", err)
					}
				}
				leNS, leaderElect, leaderID = shard.Namespace, true, shard.Ring+"-sharder.opctl.dev"
				opts.Shard = &shard
			}
			cacheOpts, err := tenancy.CacheOptions(cfg, *opts)
			if err != nil {
				return err
			}
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Scheme:                  tenancy.Scheme(),
				Cache:                   cacheOpts,
				Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
				HealthProbeBindAddress:  probeAddr,
				PprofBindAddress:        pprofAddr,
				LeaderElection:          leaderElect,
				LeaderElectionID:        leaderID,
				LeaderElectionNamespace: leNS,
			})
			if err != nil {
				return fmt.Errorf("creating the manager: %w", err)
			}
			if err := tenancy.Setup(mgr, *opts); err != nil {
				return fmt.Errorf("setting up the tenancy controller: %w", err)
			}
			if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	f.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	f.StringVar(&pprofAddr, "pprof-bind-address", "", "address of the Go /debug/pprof endpoints; empty disables them")
	f.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	f.StringVar(&leNS, "leader-election-namespace", "", "namespace of the leader election Lease, and of the shard Leases (default: the pod's; with --shards, --storage-namespace)")
	f.BoolVar(&shards, "shards", false, "run as one shard of a ring: every replica reconciles the Tenants the ring assigns it, and the leader assigns them (implies --leader-elect)")
	f.StringVar(&shard.Ring, "ring", "tenancy", "name of the ring of shards (--shards)")
	f.StringVar(&shard.ID, "shard-id", envOr("POD_NAME", hostname()), "name of this shard and of its Lease (--shards; default: $POD_NAME, else the host name)")
	f.StringVar(&shardSelector, "shard-selector", "", "label selector of the Tenants the ring covers (--shards; default: all)")
	f.StringVar(&traceFile, "shard-trace", "", "append a JSON line per reconcile of this shard to this file (tests)")
	_ = f.MarkHidden("shard-trace")
	f.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 16, "Tenants reconciled in parallel")
	f.DurationVar(&opts.UpgradeTimeout, "upgrade-timeout", 5*time.Minute, "time a release has to become ready before an upgrade is rolled back")
	f.IntVar(&opts.MaxHistory, "max-history", 5, "Helm revisions kept per release")
	f.BoolVar(&opts.DeleteUnusedCRDs, "delete-unused-crds", false, "delete a shared CRD, and all its objects, when the last Tenant using it is deleted")
	f.StringVar(&opts.StorageNamespace, "storage-namespace", envOr("POD_NAMESPACE", tenancy.DefaultStorageNamespace), "namespace of the Helm release records of every tenant; no tenant may have access to it (default: $POD_NAMESPACE, else opctl-system)")
	f.StringSliceVar(&opts.ClusterRoles, "tenant-cluster-roles", nil, "ClusterRoles, written by the platform team, whose rules every Tenant's operators may hold cluster-wide (a TenantProfile's spec.clusterRoles adds more); anything else cluster-wide is refused")
	f.StringVar(&opts.ClusterRolesConfigMap, "tenant-cluster-roles-configmap", "", "ConfigMap in the storage namespace whose data key "+tenancy.ClusterRolesKey+" lists more such ClusterRoles (charts/opctl's tenantClusterRoles value); read at every reconcile")
	f.BoolVar(&opts.PlainHTTPRegistries, "plain-http-registries", false, "pull oci:// charts, catalog images and bundle images over plain HTTP")
	f.DurationVar(&opts.CatalogPollInterval, "catalog-poll-interval", time.Minute, "how often a bundle source's catalog is read again, to follow its channel")
	f.DurationVar(&opts.DriftInterval, "drift-interval", 10*time.Minute, "how often the release objects of kinds no informer follows are compared with their release and restored")
	f.Float32Var(&qps, "kube-api-qps", 100, "queries per second to the API server")
	f.IntVar(&burst, "kube-api-burst", 200, "burst of queries to the API server")
	return cmd, opts
}
