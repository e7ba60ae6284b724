package validate

import (
	"context"
	"errors"

	"opctl.dev/opctl/pkg/tenancy/bundlerelease"
)

// BundleTenantReady (OPC-B007, tenant-ready) says what the opctl tenancy
// controller's bundle source would refuse before installing the bundle
// for a tenant of one namespace, judged against the shipped baseline only,
// as tenant-ready (OPC-C010) judges a chart.
var BundleTenantReady = register(Check{ID: "OPC-B007", Severity: SeverityWarning, Relayed: false,
	Rationale: "tenant-ready: the opctl tenancy controller installs a registry+v1 bundle for a tenant (the bundle source, without OLM) only if it fits the tenant: the OwnNamespace install mode, clusterPermissions within the shipped baseline (create TokenReviews and SubjectAccessReviews; get, list and watch StorageClasses and the operator's own CRDs by name), pods that meet Pod Security restricted, permissions within what the tenant's owners hold in its namespaces (Kubernetes' built-in admin role), the shipped baseline and the operator's own kinds, no conversion webhook, no owned APIService and no cluster-scoped object but RBAC, webhooks and CRDs. Judged against the shipped baseline only: a TenantProfile's ClusterRoles may allow more.",
	Hint:      "Support OwnNamespace, narrow clusterPermissions (resourceNames of the operator's own CRDs), meet Pod Security restricted, or leave the object out; or name a ClusterRole that allows it in the TenantProfile. opctl tenancy check says the same against the platform's ClusterRoles."}, checkBundleTenantReady)

func checkBundleTenantReady(c *Check, r *Report, in *bundleInput) {
	opts := bundlerelease.Options{Tenant: "tenant", Namespaces: bundleNamespaces(0)}
	var rel *bundlerelease.Release
	var err error
	// The objects validate read already, when they are all the manifests
	// hold: operator-framework's loader reads one document per file.
	if in.b.Package != "" && len(in.b.Objects) == len(in.files) {
		rel, err = bundlerelease.FromObjects(in.b.Package, in.b.Objects, in.files, opts)
	} else {
		rel, err = bundlerelease.FromDir(in.dir, opts)
	}
	var refused *bundlerelease.Refused
	switch {
	case errors.As(err, &refused):
		r.addReason(c, refused.Reason, againstBaseline+refused.Error(), refused.CSVFile, "ClusterServiceVersion/"+refused.Bundle)
		return
	case err != nil:
		r.add(c, againstBaseline+"the bundle source cannot render it: "+err.Error(), in.csvFile, "")
		return
	}
	// Offline, nothing is read that could fail.
	_, _ = judgeTenant(context.Background(), c, r, releaseInput(in.dir, rel, opts.Namespaces), tenantPolicy{})
}
