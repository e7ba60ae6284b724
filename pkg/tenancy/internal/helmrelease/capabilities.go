package helmrelease

import (
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/client-go/discovery"
)

// capabilitiesTTL is how long installs and upgrades render with the same
// .Capabilities. Helm reads them afresh for every action, invalidating
// the discovery cache that all releases share, so every install refetched
// the API server's discovery documents.
const capabilitiesTTL = 10 * time.Second

// capabilities are the API versions and Kubernetes version charts are
// rendered with, read at most once per capabilitiesTTL; for a TTL after
// the controller has applied CRDs, which the API server serves a moment
// later, they are read for every action, as Helm does.
type capabilities struct {
	mu       sync.Mutex
	caps     *chartutil.Capabilities
	at       time.Time
	volatile time.Time // read afresh until then
}

// setCapabilities gives cfg the current capabilities, as Helm's own
// getCapabilities would read them.
func (h *HelmClient) setCapabilities(cfg *action.Configuration) error {
	c := &h.caps
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.caps == nil || now.Sub(c.at) >= capabilitiesTTL || now.Before(c.volatile) {
		h.discovery.Invalidate()
		v, err := h.discovery.ServerVersion()
		if err != nil {
			return fmt.Errorf("reading the Kubernetes version: %w", err)
		}
		// A registered but unavailable API service fails its group only;
		// the other groups are read, as Helm does.
		versions, err := action.GetVersionSet(h.discovery)
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			return fmt.Errorf("reading the API versions: %w", err)
		}
		c.caps = &chartutil.Capabilities{APIVersions: versions, HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
			KubeVersion: chartutil.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor}}
		c.at = time.Now()
	}
	cfg.Capabilities = c.caps
	return nil
}

// CrdsApplied makes installs and upgrades read the capabilities afresh
// for a TTL: the controller has just made or changed an API (a CRD) that
// a chart may look for.
func (h *HelmClient) CrdsApplied() {
	h.caps.mu.Lock()
	defer h.caps.mu.Unlock()
	h.caps.volatile = time.Now().Add(capabilitiesTTL)
}
