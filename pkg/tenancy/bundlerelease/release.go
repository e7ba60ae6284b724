package bundlerelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

// Options say for which tenant, and against which cluster, a bundle is
// rendered.
type Options struct {
	// Tenant names the tenant; Namespaces are its namespaces, the first
	// one the operator's.
	Tenant     string
	Namespaces []string
	// Mapper is the cluster's discovery, which says which kinds and
	// resources are cluster-scoped as the controller asks it. Without
	// one, the APIs opctl knows to be cluster-scoped are, and every other
	// is namespaced.
	Mapper meta.RESTMapper
}

// Selection picks a catalog's bundle as a Tenant's
// spec.operators[].bundle and version do.
type Selection struct {
	Package string
	// Channel is the package's default channel when empty.
	Channel string
	// Version pins a version of the channel; empty is the channel head.
	Version string
}

// Release is what the bundle backend would install.
type Release struct {
	Package, Channel string
	// Bundle is the bundle's name (its CSV's); Version its version.
	Bundle, Version string
	// Metadata is the Chart.yaml of the chart Helm installs, Objects
	// what that chart holds; CRDs are applied apart from it, as shared
	// CRDs.
	Metadata *chart.Metadata
	Objects  []*unstructured.Unstructured
	CRDs     []*unstructured.Unstructured
	// Files name the bundle file each object of Chart and CRDs came from,
	// by "Kind/name": the CSV's for what the CSV declares. Empty for a
	// catalog's bundle, which has no files.
	Files map[string]string
	// CSVFile is the CSV's file ("" in a catalog).
	CSVFile string
}

// Refused is a bundle the controller would not render for the tenant:
// install modes that do not fit its namespaces, a conversion webhook.
type Refused struct {
	Reason string
	Err    error
	// Package, Channel and Bundle name the bundle as Release does;
	// CSVFile is the CSV's file ("" in a catalog).
	Package, Channel, Bundle, CSVFile string
}

func (e *Refused) Error() string { return e.Err.Error() }
func (e *Refused) Unwrap() error { return e.Err }

// FromDir renders the registry+v1 bundle in dir, as opctl package writes
// it, released under its package's name.
func FromDir(dir string, opts Options) (*Release, error) {
	b, err := registryv1.ReadBundleDir(dir)
	if err != nil {
		return nil, err
	}
	return render(b.Package, "", b.Objects, b.Files, nil, opts)
}

// FromObjects renders the objects of a registry+v1 bundle of package pkg
// already read (as ReadBundleDir reads a directory: every document of every
// manifest file), files naming the file of each by "Kind/name". The
// objects are not changed.
func FromObjects(pkg string, objs []*unstructured.Unstructured, files map[string]string, opts Options) (*Release, error) {
	return render(pkg, "", objs, files, nil, opts)
}

// FromCatalog resolves sel in the file-based catalog in dir as the bundle
// backend resolves a Tenant's operator on its first install, and renders
// the bundle, released under its package's name. A bundle the catalog
// does not carry the objects of is read from its image.
func FromCatalog(ctx context.Context, dir string, sel Selection, opts Options) (*Release, error) {
	cfg, err := registryv1.LoadCatalogDir(dir)
	if err != nil {
		return nil, err
	}
	var packages []string
	for _, p := range cfg.Packages {
		packages = append(packages, p.Name)
		if p.Name == sel.Package && sel.Channel == "" {
			sel.Channel = p.DefaultChannel
		}
	}
	slices.Sort(packages)
	if sel.Package == "" || !slices.Contains(packages, sel.Package) {
		return nil, fmt.Errorf("catalog %s: name one of its packages (%s) with --package, not %q", dir, strings.Join(packages, ", "), sel.Package)
	}
	if sel.Channel == "" {
		return nil, fmt.Errorf("catalog %s: package %s has no default channel: name one with --channel", dir, sel.Package)
	}
	res, err := registryv1.ResolveBundle(cfg, registryv1.ResolveInput{Pkg: sel.Package, Channel: sel.Channel, Pinned: sel.Version})
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", dir, err)
	}
	content, err := registryv1.NewFBCCatalogs(nil, nil, false, time.Minute).Content(ctx, res.Bundle)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", dir, err)
	}
	return render(sel.Package, sel.Channel, content.Objects, nil, res, opts)
}

// render renders objs as RenderBundle does for the controller; res is nil
// for a bundle directory, whose CSV names the bundle and its version.
func render(pkg, channel string, objs []*unstructured.Unstructured, files map[string]string, res *registryv1.Resolution, opts Options) (*Release, error) {
	var crds []*unstructured.Unstructured
	csvFile, bundle := "", ""
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o)
		case "ClusterServiceVersion":
			csvFile, bundle = files["ClusterServiceVersion/"+o.GetName()], o.GetName()
		}
	}
	if res != nil {
		bundle = res.Bundle.Name
	}
	in := registryv1.BundleRender{Tenant: opts.Tenant, Release: pkg, Namespaces: opts.Namespaces, Objects: objs,
		Certs: func(deployments []string) (*registryv1.WebhookCerts, error) {
			return registryv1.IssueWebhookCerts(time.Now(), opts.Namespaces[0], deployments)
		}}
	if opts.Mapper != nil {
		in.ClusterScoped, in.ClusterResource = registryv1.MapperScopes(opts.Mapper)
	} else {
		in.ClusterScoped, in.ClusterResource = offlineScopes(crds)
	}
	rendered, err := registryv1.RenderBundle(in)
	var reason *operatorkit.ReasonError
	if errors.As(err, &reason) && reason.Reason != "InvalidBundle" {
		return nil, &Refused{Reason: reason.Reason, Err: reason.Err, Package: pkg, Channel: channel, Bundle: bundle, CSVFile: csvFile}
	}
	if err != nil {
		return nil, fmt.Errorf("bundle of package %s: %w", pkg, err)
	}
	csv := rendered.CSV()
	if res == nil {
		v, err := semver.Parse(csv.Spec.Version.String())
		if err != nil {
			return nil, fmt.Errorf("%s: the CSV's spec.version %q is not SemVer: %w", csvFile, csv.Spec.Version.String(), err)
		}
		res = &registryv1.Resolution{Bundle: &declcfg.Bundle{Name: csv.Name}, Version: v}
	}
	out := &Release{Package: pkg, Channel: channel, Bundle: bundle, Version: res.Version.String(), CRDs: crds,
		Metadata: registryv1.ReleaseMetadata(pkg, res), Objects: rendered.Objects, Files: map[string]string{}, CSVFile: csvFile}
	if files == nil {
		return out, nil
	}
	// What RenderBundle carries keeps its name, or takes one qualified by
	// the tenant and release; everything else is the CSV's.
	prefix := "opctl." + opts.Tenant + "." + pkg + "."
	for _, o := range rendered.Objects {
		kind, name := o.GetKind(), o.GetName()
		f, ok := files[kind+"/"+strings.TrimPrefix(name, prefix)]
		if !ok {
			f = csvFile
		}
		out.Files[kind+"/"+name] = f
	}
	for _, c := range crds {
		out.Files["CustomResourceDefinition/"+c.GetName()] = files["CustomResourceDefinition/"+c.GetName()]
	}
	return out, nil
}

// offlineScopes are RenderBundle's scopes without a cluster: the bundle's
// own CRDs say theirs, the APIs opctl knows to be cluster-scoped are, and
// everything else is namespaced.
func offlineScopes(crds []*unstructured.Unstructured) (func(schema.GroupVersionKind) bool, func(group, resource string) bool) {
	kinds := map[string]bool{}
	for _, c := range crds {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(c.Object, "spec", "scope")
		kinds[group+"/"+kind] = scope == "Cluster"
	}
	return func(gvk schema.GroupVersionKind) bool {
			return kinds[gvk.Group+"/"+gvk.Kind] || packaging.ClusterScopedKind(gvk.Group, gvk.Kind)
		}, func(group, resource string) bool {
			return packaging.ClusterScopedResource(group, resource)
		}
}
