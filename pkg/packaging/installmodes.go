package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// supportedModes are the install modes the manager supports: OwnNamespace
// and SingleNamespace when its rules can be granted per namespace (no
// wildcard rule needs a ClusterRole) and its code reads a watch-namespace
// setting (or opctl found no code to tell); MultiNamespace as well when
// that setting takes a comma-separated list, or multi asks for it;
// AllNamespaces always. opctl.yaml's installModes override each.
func (p *Project) supportedModes(mgr Grant, multi bool) map[string]bool {
	namespaced := true
	for _, r := range mgr.Cluster {
		if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
			namespaced = false
		}
	}
	own, many := namespaced, multi && namespaced
	switch w := p.Watch; {
	case w.Known() && w.Reads():
		many = namespaced && (w.List || multi)
	case w.Known():
		// It watches every namespace whatever it is given.
		own, many = false, false
	}
	pick := func(override *bool, def bool) bool {
		if override != nil {
			return *override
		}
		return def
	}
	// opctl.yaml over the base CSV; but a manager that reads no namespace
	// watches all whatever the base CSV (often the scaffold's) claims.
	im := p.Config.InstallModes
	if p.Watch.Known() && !p.Watch.Reads() {
		im = p.inputs.configModes()
	}
	return map[string]bool{
		contract.OwnNamespace:    pick(im.OwnNamespace, own),
		contract.SingleNamespace: pick(im.SingleNamespace, own),
		contract.MultiNamespace:  pick(im.MultiNamespace, many),
		contract.AllNamespaces:   pick(im.AllNamespaces, true),
	}
}

// installModes are the CSV's install modes: supportedModes, but
// AllNamespaces only with conversion webhooks, which OLM serves only to
// operators of the whole cluster.
func (p *Project) installModes(opts BundleOptions, grants []Grant) []operatorsv1alpha1.InstallMode {
	m := p.supportedModes(p.ManagerGrant(grants), opts.MultiNamespace)
	if len(p.conversionCRDs()) > 0 {
		m[contract.OwnNamespace], m[contract.SingleNamespace], m[contract.MultiNamespace] = false, false, false
	}
	return []operatorsv1alpha1.InstallMode{
		{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: m[contract.OwnNamespace]},
		{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: m[contract.SingleNamespace]},
		{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: m[contract.MultiNamespace]},
		{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: m[contract.AllNamespaces]},
	}
}

// allNamespacesOnly reports a manager whose code reads no watch-namespace
// setting, unless opctl.yaml says it supports a namespaced mode.
func (p *Project) allNamespacesOnly() bool {
	im := p.inputs.configModes()
	override := ptrTrue(im.OwnNamespace) || ptrTrue(im.SingleNamespace) || ptrTrue(im.MultiNamespace)
	return p.Watch.Known() && !p.Watch.Reads() && !override
}

// watchWarnings say what detection could not find.
func (p *Project) watchWarnings() {
	w := p.Watch
	bounded := ""
	if w.Truncated {
		bounded = fmt.Sprintf(" (stopped at its bounds: %d packages, %d files)", w.Packages, w.Files)
	}
	switch {
	case !w.Known():
		if _, err := os.Stat(filepath.Join(p.Dir, "go.mod")); err == nil {
			p.warnf("no main package of the manager found (main in %s, the Dockerfile's go build, %v), so opctl cannot tell whether it reads a watch-namespace setting: the install modes follow its RBAC alone; set main in %s", ConfigFile, mainCandidates, ConfigFile)
		}
	case !w.Reads() && p.allNamespacesOnly():
		cache := ""
		if w.Cache != "" {
			cache = fmt.Sprintf("; it sets %s, but from no such setting", w.Cache)
		}
		if base := p.Config.InstallModes; p.inputs != nil && p.inputs.baseCSV != "" && (ptrTrue(base.OwnNamespace) || ptrTrue(base.SingleNamespace) || ptrTrue(base.MultiNamespace)) {
			rel, err := filepath.Rel(p.Dir, p.inputs.baseCSV)
			if err != nil {
				rel = p.inputs.baseCSV
			}
			cache += fmt.Sprintf("; the base CSV %s claims namespaced install modes, which the code does not support, so they are dropped", filepath.ToSlash(rel))
		}
		p.warnf("the manager (main package %s, found by %s) reads no watch-namespace setting: opctl looked for %s in %d files of %d packages (the main package and the module's packages it imports)%s%s. It watches every namespace, so the CSV supports AllNamespaces only, the chart defaults to rbac.scope=cluster, and the tenancy controller refuses it for tenants; if it reads its namespaces some other way, set installModes in %s", w.Main, w.How, lookedFor, w.Files, w.Packages, bounded, cache, ConfigFile)
	case w.Truncated:
		p.warnf("reading the manager's code (main package %s) stopped at its bounds: %d packages, %d files", w.Main, w.Packages, w.Files)
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }
