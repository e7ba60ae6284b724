package controller_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

// The data-path manager reconciles the KVStores labelled for it, and
// reaches their pods' servers at the local processes the tests register:
// pods under kwok have no network, so each pod's server is a real
// redis-server on loopback.
const (
	dataPathAgent = "kvstore-operator-datapath-test"
	toolsImage    = "opctl.dev/kvstore-operator-tools:test"
)

var (
	servers sync.Map // "namespace/pod" → host:port
	resp    = instance.RESP{Timeout: 5 * time.Second}
)

func startDataPathManager(c *testcluster.Cluster) (func(), error) {
	suite, err := labels.Parse(suiteLabel + "=datapath")
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{Scheme: scheme, Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&kvv1.KVStore{}: {Label: suite}, &kvv1.KVBackup{}: {Label: suite}}}}
	return c.StartManager(opts, dataPathAgent, func(mgr ctrl.Manager) error {
		_, err := controller.Setup(mgr, controller.Options{Workers: 2, ToolsImage: toolsImage, DataPath: &controller.DataPath{
			Manager: resp, Address: serverAddress, Poll: 300 * time.Millisecond, LinkGrace: time.Second,
		}})
		return err
	})
}

// serverAddress is the registered server of a pod, or a closed port.
func serverAddress(k *kvv1.KVStore, pod string) string {
	if a, ok := servers.Load(k.Namespace + "/" + pod); ok {
		return a.(string)
	}
	return "127.0.0.1:1"
}

// serveStore starts a redis-server for each of the store's first n pods
// and creates the store's Secret with their password, for the operator to
// adopt.
func serveStore(t *testing.T, ns, name string, n int) map[string]*instancetest.Server {
	t.Helper()
	out := map[string]*instancetest.Server{}
	for i := range n {
		pod := fmt.Sprintf("%s-%d", name, i)
		s := instancetest.Start(t, "")
		out[pod] = s
		servers.Store(ns+"/"+pod, s.Addr())
		t.Cleanup(func() { servers.Delete(ns + "/" + pod) })
	}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-auth"},
		Data: map[string][]byte{"password": []byte(instancetest.Password)}})
	return out
}

// dataPathStore is a KVStore for the data-path manager.
func dataPathStore(ns, name string, replicas int32) *kvv1.KVStore {
	k := newKVStore(ns, name, replicas)
	k.Labels[suiteLabel] = "datapath"
	k.Spec.AdoptExisting = true // the Secret the test made
	return k
}

// replicaOf waits until the server follows primary with its link up.
func replicaOf(t *testing.T, replica, primary *instancetest.Server) {
	t.Helper()
	testcluster.Eventually(t, 30*time.Second, fmt.Sprintf("%s replicating %s", replica.Addr(), primary.Addr()), func(ctx context.Context) error {
		st, err := resp.Status(ctx, replica.Target())
		if err != nil {
			return err
		}
		if st.Primary() || st.MasterPort != primary.Port || !st.LinkUp {
			return fmt.Errorf("role %s master port %d link up %v", st.Role, st.MasterPort, st.LinkUp)
		}
		return nil
	})
}

// podRoles maps the store's pods to their role label.
func podRoles(t *testing.T, k *kvv1.KVStore) map[string]string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := kube.List(context.Background(), pods, client.InNamespace(k.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": k.Name}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Labels[controller.RoleLabel]
	}
	return out
}

// hasEvent reports whether the object has an Event with reason.
func hasEvent(ctx context.Context, ns, name, reason string) error {
	evs := &corev1.EventList{}
	if err := kube.List(ctx, evs, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s event on %s", reason, name)
}

// phases records, from a watch, the store's lifecycle phase and
// Progressing reason as they change, until stop is called or the store is
// gone: the states a test must see on the live object.
func phases(t *testing.T, k *kvv1.KVStore) (stop func() []string) {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &kvv1.KVStoreList{}, client.InNamespace(k.Namespace),
		client.MatchingFields{"metadata.name": k.Name})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []string
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			live, ok := ev.Object.(*kvv1.KVStore)
			if !ok {
				continue
			}
			reason := ""
			for _, c := range live.Status.Conditions {
				if c.Type == "Progressing" && c.Status == metav1.ConditionTrue {
					reason = c.Reason
				}
			}
			s := string(live.Status.Phase) + "/" + reason
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

var (
	managerOnce sync.Once
	managerBin  string
	managerErr  error
)

// manager builds the operator binary, whose backup and restore
// subcommands the tests run as the kubelet would.
func manager(t *testing.T) string {
	t.Helper()
	managerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kvstore-manager")
		if err != nil {
			managerErr = err
			return
		}
		managerBin, managerErr = testcluster.GoBuild(dir, "opctl.dev/opctl/operators/sample/cmd", "")
	})
	if managerErr != nil {
		t.Fatal(managerErr)
	}
	return managerBin
}
