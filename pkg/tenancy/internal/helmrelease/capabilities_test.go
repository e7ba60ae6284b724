package helmrelease

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestCapabilities: installs and upgrades share the capabilities for a
// TTL, and read them for every action for a TTL after CRDs are applied.
func TestCapabilities(t *testing.T) {
	fake := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}, FakedServerVersion: &kversion.Info{GitVersion: "v1.36.3", Major: "1", Minor: "36"}}
	fake.Resources = []*metav1.APIResourceList{{GroupVersion: "kv.opctl.dev/v1alpha1", APIResources: []metav1.APIResource{{Name: "kvstores", Kind: "KVStore"}}}}
	h := &HelmClient{discovery: memory.NewMemCacheClient(fake)}
	reads := func() int {
		n := 0
		for _, a := range fake.Actions() {
			if a.GetResource().Resource == "version" {
				n++
			}
		}
		return n
	}
	read := func() *action.Configuration {
		t.Helper()
		cfg := &action.Configuration{}
		if err := h.setCapabilities(cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := read()
	if !cfg.Capabilities.APIVersions.Has("kv.opctl.dev/v1alpha1/KVStore") || cfg.Capabilities.KubeVersion.Version != "v1.36.3" {
		t.Errorf("capabilities %+v", cfg.Capabilities)
	}
	read()
	if n := reads(); n != 1 {
		t.Errorf("two actions within the TTL read the version %d times, want 1", n)
	}
	h.CrdsApplied()
	read()
	read()
	if n := reads(); n != 3 {
		t.Errorf("after CRDs were applied, two actions read the version %d times in all, want 3", n)
	}
	h.caps.volatile, h.caps.at = time.Time{}, time.Now().Add(-capabilitiesTTL)
	read()
	read()
	if n := reads(); n != 4 {
		t.Errorf("after the TTL, two actions read the version %d times in all, want 4", n)
	}
}
