package testcluster

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Controllers are the kube-controller-manager controllers the test control
// plane runs: enough for namespaces, garbage collection, quota, workloads,
// ServiceAccounts, DaemonSets on the kwok nodes, RBAC aggregation (the admin/edit/view roles), PDBs and
// binding claims to pre-created PersistentVolumes.
// node-lifecycle is left out on purpose: on a loaded 2-core machine kwok's
// heartbeats can lag, and that controller would then mark every pod
// NotReady, which kwok never reverses. Without it, new nodes must not be
// tainted not-ready either (see disabledAdmissionPlugins).
var Controllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"resourcequota-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"daemonset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"clusterrole-aggregation-controller",
	"disruption-controller",
	"endpointslice-controller",
	"persistentvolume-binder-controller",
}

// AdmissionPlugins are enabled on the API server.
var AdmissionPlugins = []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "ResourceQuota", "PodSecurity", "DefaultStorageClass"}

// disabledAdmissionPlugins: TaintNodesByCondition would taint new nodes
// not-ready, a taint only node-lifecycle lifts.
var disabledAdmissionPlugins = []string{"TaintNodesByCondition"}

// serviceCIDR leaves room for thousands of Services (benchmarks).
const serviceCIDR = "10.0.0.0/16"

// ports are the loopback ports of one control plane.
type ports struct {
	etcdClient, etcdPeer, etcdMetrics, apiserver, controllerManager, scheduler, kwok int
}

func allocatePorts() (ports, error) {
	p, err := freePorts(7)
	if err != nil {
		return ports{}, err
	}
	return ports{p[0], p[1], p[2], p[3], p[4], p[5], p[6]}, nil
}

func etcdArgs(dir string, p ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", p.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)
	return []string{
		"--name=default",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", p.etcdMetrics),
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func apiserverArgs(dir string, p ports) []string {
	f := func(name string) string { return filepath.Join(dir, name) }
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", p.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.apiserver),
		"--tls-cert-file=" + f("apiserver.crt"),
		"--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"),
		"--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=RBAC",
		"--enable-admission-plugins=" + strings.Join(AdmissionPlugins, ","),
		"--disable-admission-plugins=" + strings.Join(disabledAdmissionPlugins, ","),
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--audit-policy-file=" + f("audit-policy.yaml"),
		"--audit-log-path=" + f(auditLogName),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		// Never rotated (the default rotates at 100 MB): a reader's offset
		// must stay in the file it was taken from.
		"--audit-log-maxsize=1000000",
	}
}

// clientFlags are the kubeconfig and serving flags the controller manager
// and the scheduler share.
func clientFlags(kubeconfig string, port int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=false",
		// The defaults (20 QPS) throttle status updates of a thousand
		// workloads for minutes; a thousand tenants (Deployments,
		// ReplicaSets, pods and quotas each) need more still.
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
	}
}

func controllerManagerArgs(dir string, p ports) []string {
	return append(clientFlags(filepath.Join(dir, "controller-manager.kubeconfig"), p.controllerManager),
		"--controllers="+strings.Join(Controllers, ","),
		"--use-service-account-credentials=true",
		"--root-ca-file="+filepath.Join(dir, "ca.crt"),
		"--service-account-private-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range="+serviceCIDR,
		"--concurrent-gc-syncs=5",
		// A quota that counts a custom resource is only counted once the
		// quota controller has discovered it (every 30 s) and then resynced
		// the quota: every 5 min by default, too slow for tests.
		"--resource-quota-sync-period=10s",
		// More workers, as large clusters run, so that a thousand new
		// namespaces' quotas, Deployments and ReplicaSets do not queue.
		"--concurrent-resource-quota-syncs=20",
		"--concurrent-deployment-syncs=20",
		"--concurrent-replicaset-syncs=20",
	)
}

func schedulerArgs(dir string, p ports) []string {
	return clientFlags(filepath.Join(dir, "scheduler.kubeconfig"), p.scheduler)
}

func kwokArgs(dir string, p ports) []string {
	return []string{
		"--kubeconfig=" + filepath.Join(dir, "kwok.kubeconfig"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + fakeNodeAnnotation + "=fake",
		"--enable-crds=Stage",
		"--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--server-address=127.0.0.1:%d", p.kwok),
	}
}

// auditPolicy records every write at Metadata level, so tests can count
// the writes a controller makes, and every request of the ServiceAccounts
// of AuditedNamespace, so tests can compare what a controller running as
// one requests with the rules it is granted.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
  userGroups: ["system:serviceaccounts:` + AuditedNamespace + `"]
- level: None
`

// AuditedNamespace is the namespace whose ServiceAccounts' reads the
// audit log records too: the tenancy controller's.
const AuditedNamespace = "opctl-system"

const auditLogName = "audit.log"
