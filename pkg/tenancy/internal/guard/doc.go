// Package guard holds the checks that stand between a tenant's bytes and
// the controller's rights.
//
// A tenant's chart, values and catalog decide what a release renders, so
// nothing rendered or stored is trusted:
//
//   - RenderGuard runs as Helm's post-renderer: ReleaseScope.Foreign
//     refuses a manifest that names objects outside the tenant's
//     namespaces, GrantPolicy refuses RBAC that would grant rights the
//     platform did not allow, and SetLabels marks every object with the
//     tenant's labels. ReleaseScope.Verify and VerifyApply check a stored
//     revision the same way before Helm rolls back to it or re-applies it.
//   - EnsureCRDs applies the shared CRDs of a tenant's operators and
//     refuses a change (SkewError) that would drop a version, or prune or
//     refuse what another tenant stored: CompareCRD compares the
//     structural schemas (crd_schema.go), StoredObjectsFit runs new
//     validation over the stored objects (crd_stored.go); IsShared tells
//     the controller's CRDs from ones it did not install (the policy
//     package judges what opctl tenancy check judges too: the Roles in
//     the tenant's namespaces and conversion webhooks).
//   - NarrowWebhooks narrows a rendered admission webhook to the tenant's
//     namespaces.
//
// ManifestDocs, ParseDoc and SplitManifest parse Helm manifests with
// bounded decoding; Localize turns a cluster-scoped rule into the
// namespaced form the tenant may hold. The package imports neither the
// release engine nor any backend.
package guard
