package testcluster

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Controllers are the kube-controller-manager controllers the test control
// plane runs: enough for namespaces, garbage collection, quota, workloads,
// ServiceAccounts, RBAC aggregation (the admin/edit/view roles) and PDBs.
// node-lifecycle lifts the not-ready taint that the API server puts on new
// nodes once kwok reports them Ready.
var Controllers = []string{
	"node-lifecycle-controller",
	"namespace-controller",
	"garbage-collector-controller",
	"resourcequota-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"job-controller",
	"cronjob-controller",
	"ttl-after-finished-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"clusterrole-aggregation-controller",
	"disruption-controller",
	"endpointslice-controller",
}

// AdmissionPlugins are enabled on the API server.
var AdmissionPlugins = []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "ResourceQuota", "PodSecurity", "DefaultStorageClass"}

const serviceCIDR = "10.0.0.0/24"

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
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--audit-policy-file=" + f("audit-policy.yaml"),
		"--audit-log-path=" + f(auditLogName),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
	}
}

func controllerManagerArgs(dir string, p ports) []string {
	kc := filepath.Join(dir, "controller-manager.kubeconfig")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.controllerManager),
		"--controllers=" + strings.Join(Controllers, ","),
		"--use-service-account-credentials=true",
		"--leader-elect=false",
		"--root-ca-file=" + filepath.Join(dir, "ca.crt"),
		"--service-account-private-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--concurrent-gc-syncs=5",
	}
}

func schedulerArgs(dir string, p ports) []string {
	kc := filepath.Join(dir, "scheduler.kubeconfig")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.scheduler),
		"--leader-elect=false",
	}
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

// auditPolicy records every write (not reads) at Metadata level, so tests
// can count the writes a controller makes.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

const auditLogName = "audit.log"
