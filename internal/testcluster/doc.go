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
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
//
//	func TestSomething(t *testing.T) {
//		c := testcluster.Require(t, cluster)
//		...
//	}
//
// When OPCTL_TEST_KUBECONFIG names the kubeconfig of a running test control
// plane (make test starts one for the whole run with hack/testcluster), Main
// attaches to it instead of starting its own. With OPCTL_SKIP_CLUSTER=1,
// Require skips the test; nothing else skips it. A missing binary is an
// error that says to run make testbin.
package testcluster
