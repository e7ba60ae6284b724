// Package testcluster runs a real Kubernetes control plane for tests:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
// built from source by hack/testbin.sh into bin/k8s/<version>/.
//
// Everything listens on 127.0.0.1 with free ports and lives in a temporary
// directory. The API server runs with RBAC authorization, an audit log of
// writes, and the NamespaceLifecycle, LimitRanger, ServiceAccount,
// ResourceQuota, PodSecurity and DefaultStorageClass admission plugins. The
// controller manager runs the controllers listed in Controllers, so garbage
// collection, namespace deletion, quota accounting and workload rollouts are
// real. kwok turns the fake nodes (annotated kwok.x-k8s.io/node=fake) Ready
// and drives pods through their lifecycle from Stage objects, so tests add
// stages at run time with Cluster.AddStage; KubeletStages let a test run a
// pod's program itself and report how it ended. The Prometheus operator's
// CRDs (ServiceMonitor, PodMonitor, PrometheusRule) are installed, so the
// monitoring API is served; no Prometheus operator acts on it.
//
// Tests use it from TestMain:
//
//	var cluster *testcluster.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, setup)) }
//
//	func TestSomething(t *testing.T) {
//		c := testcluster.Require(t, cluster)
//		...
//	}
//
// Require is the one gate of a cluster test: Main starts nothing, the
// first Require starts a control plane (or attaches to OPCTL_TEST_KUBECONFIG,
// which make test sets), runs the setups and sets cluster, and Main tears
// down only what was brought up. So a test without Require runs with no
// cluster and no environment switch. RequireOwn gives a test a control
// plane of its own. With OPCTL_SKIP_CLUSTER=1 (make test-unit, which CI
// runs) both skip with the reason, so a test that touches what a setup
// made without Require fails there; otherwise nothing skips, and a
// missing binary is an error that says to run make testbin.
package testcluster
