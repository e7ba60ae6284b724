package validate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/tenancy/bundlerelease"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// TenantVerdict is what opctl tenancy check says of a chart, bundle or
// catalog package for a tenant: what the tenancy controller would refuse
// before installing it, judged against the shipped baseline and the
// platform's ClusterRoles given, and a ClusterRole that would allow the
// cluster-wide rules still missing.
type TenantVerdict struct {
	// Path is what was judged, of Kind chart, bundle or catalog.
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Package, Channel and Bundle name the bundle judged (bundles and
	// catalogs; Channel for catalogs only).
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// ClusterRoles are the platform's roles it was judged with.
	ClusterRoles []string `json:"clusterRoles"`
	// OwnerRole says which rules of the tenant's owners the Roles in its
	// namespaces were judged against: the cluster's admin ClusterRole, or
	// without a cluster Kubernetes' built-in one (BuiltinOwnerRole).
	OwnerRole string `json:"ownerRole"`
	// Fits is true when nothing would be refused.
	Fits bool `json:"fits"`
	// Refusals name each rule or object refused and why.
	Refusals []Finding `json:"refusals"`
	// Allow is a ClusterRole that, named for the tenant's profile and
	// bound to the controller, allows the missing cluster-wide rules;
	// nil when none are missing.
	Allow *rbacv1.ClusterRole `json:"allow,omitempty"`
}

// TenantOptions say what CheckTenant judges a bundle for.
type TenantOptions struct {
	// Package, Channel and Version pick a catalog's bundle: the channel
	// (default: the package's default channel) head, or that version.
	Package, Channel, Version string
	// Namespaces is how many namespaces the tenant has (0 is one): a
	// bundle must support OwnNamespace for one, MultiNamespace for more.
	Namespaces int
	// Mapper is the cluster's discovery, which says which kinds and
	// resources a bundle's objects and rules are cluster-scoped, as the
	// controller asks it; nil judges by the APIs opctl knows.
	Mapper meta.RESTMapper
	// Roles reads the cluster's roles, as the controller does: the
	// owners' (policy.OwnerRole) and those a RoleBinding names that the
	// release does not define. Nil judges by Kubernetes' built-in admin
	// role (policy.BuiltinOwnerRules) and the built-in roles opctl knows.
	Roles *policy.ClusterRoles
}

// ClusterOwnerRole is OwnerRole of a verdict judged with a cluster.
const ClusterOwnerRole = "the cluster's " + policy.OwnerRole + " ClusterRole"

// CheckTenant judges the chart, registry+v1 bundle or catalog package at
// path for a tenant, the platform's roles allowing more than the shipped
// baseline, as the tenant-ready check does: a chart with
// rbac.scope=namespace and its required values stood in, a bundle as the
// tenancy controller's bundle backend renders it for the tenant.
func CheckTenant(ctx context.Context, path string, platform []rbacv1.ClusterRole, opts TenantOptions) (*TenantVerdict, error) {
	kind, err := tenantInputKind(path)
	if err != nil {
		return nil, err
	}
	if kind != KindCatalog && (opts.Package != "" || opts.Channel != "" || opts.Version != "") {
		return nil, fmt.Errorf("%s is a %s: --package, --channel and --version pick a bundle of a catalog directory", path, kind)
	}
	tp := tenantPolicy{platform: platform}
	v := &TenantVerdict{Path: path, Kind: kind, ClusterRoles: []string{}, OwnerRole: BuiltinOwnerRole}
	if opts.Roles != nil {
		if tp.owner, err = opts.Roles.Owner(ctx); err != nil {
			return nil, err
		}
		tp.live, v.OwnerRole = opts.Roles, ClusterOwnerRole
	}
	for _, role := range platform {
		v.ClusterRoles = append(v.ClusterRoles, role.Name)
	}
	r := &Report{Path: path, Kind: kind, Findings: []Finding{}}
	var in *chartInput
	if kind == KindChart {
		if in, err = tenantChart(path); err != nil {
			return nil, err
		}
	} else {
		rel, err := tenantBundle(ctx, path, kind, opts)
		var refused *bundlerelease.Refused
		if errors.As(err, &refused) {
			v.Package, v.Channel, v.Bundle = refused.Package, refused.Channel, refused.Bundle
			r.addReason(TenantReady, refused.Reason, against(platform)+refused.Error(), refused.CSVFile, "ClusterServiceVersion/"+refused.Bundle)
			v.Refusals = r.Findings
			return v, nil
		}
		if err != nil {
			return nil, err
		}
		v.Package, v.Channel, v.Bundle = rel.Package, rel.Channel, rel.Bundle
		in = releaseInput(path, rel, bundleNamespaces(opts.Namespaces))
	}
	missing, err := judgeTenant(ctx, TenantReady, r, in, tp)
	if err != nil {
		return nil, err
	}
	v.Refusals, v.Fits = r.Findings, len(r.Findings) == 0
	if len(missing) > 0 {
		name := "tenant-operators"
		if in.chart.Metadata != nil {
			name = in.chart.Metadata.Name + "-for-tenants"
		}
		v.Allow = &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: slices.Clip(missing)}
	}
	return v, nil
}

// tenantInputKind is what path holds of what opctl tenancy check judges.
func tenantInputKind(path string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	switch kind, _ := sniff(path); kind {
	case KindChart, KindBundle, KindCatalog:
		return kind, nil
	case KindProject:
		return "", fmt.Errorf("%s is an operator project: run opctl package on it and check the chart or bundle it writes", path)
	}
	return "", fmt.Errorf("%s is neither a Helm chart (a directory with Chart.yaml, or a .tgz), a registry+v1 bundle (a directory with manifests/ and metadata/annotations.yaml) nor a file-based catalog (a directory of olm.package, olm.channel and olm.bundle documents, judged with --package)", path)
}

// tenantChart renders the chart at path as the tenancy controller
// installs it: rbac.scope=namespace, its required values stood in.
func tenantChart(path string) (*chartInput, error) {
	c, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable Helm chart: %w", path, err)
	}
	in := &chartInput{dir: path, chart: c, standIns: standIns(c)}
	vals := maps.Clone(in.standIns)
	vals["rbac"] = map[string]any{"scope": "namespace"}
	rd := newRender(c, vals)
	if rd.err != nil {
		return nil, fmt.Errorf("%s does not render with rbac.scope=namespace: %w", path, rd.err)
	}
	in.renders = []chartRender{rd}
	return in, nil
}

// tenantBundle renders the bundle at path, or the catalog package
// opts picks, for a tenant of opts.Namespaces namespaces.
func tenantBundle(ctx context.Context, path, kind string, opts TenantOptions) (*bundlerelease.Release, error) {
	ro := bundlerelease.Options{Tenant: "tenant", Namespaces: bundleNamespaces(opts.Namespaces), Mapper: opts.Mapper}
	if kind == KindBundle {
		return bundlerelease.FromDir(path, ro)
	}
	return bundlerelease.FromCatalog(ctx, path, bundlerelease.Selection{Package: opts.Package, Channel: opts.Channel, Version: opts.Version}, ro)
}

// bundleNamespaces are the namespaces of the tenant a bundle is rendered
// for: n of them (0 is one).
func bundleNamespaces(n int) []string {
	out := []string{"tenant"}
	for i := 2; i <= n; i++ {
		out = append(out, "tenant-"+strconv.Itoa(i))
	}
	return out
}

// releaseInput is the chart input of a bundle's release: the objects Helm
// would install and the CRDs the controller applies beside them, each
// found at the bundle file it came from, rendered for a tenant of
// namespaces.
func releaseInput(path string, rel *bundlerelease.Release, namespaces []string) *chartInput {
	// The release's chart prints its objects as they are.
	objs := make([]rendered, 0, len(rel.Objects)+len(rel.CRDs))
	for _, o := range rel.Objects {
		objs = append(objs, rendered{obj: o})
	}
	for _, c := range rel.CRDs {
		objs = append(objs, rendered{obj: c})
	}
	for i := range objs {
		objs[i].template = rel.Files[objs[i].obj.GetKind()+"/"+objs[i].obj.GetName()]
	}
	return &chartInput{dir: path, chart: &chart.Chart{Metadata: rel.Metadata}, renders: []chartRender{renderOf(objs)}, namespaces: namespaces}
}
