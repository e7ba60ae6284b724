// Package registryv1 reads OLM registry+v1 bundles from catalogs and
// renders them as OLM would install them, without OLM.
//
// Catalogs come in two shapes: a file-based catalog (FBCCatalogs: a
// catalog image, an HTTP URL or a ConfigMap, read with bounded sizes and
// cached by digest) and an operator-registry gRPC server
// (CatalogClient). ResolveBundle picks the bundle an operator should run in
// its channel's upgrade graph (replaces, skips, skipRange) and reports
// the newer ones it does not run (Resolution). Content returns a
// bundle's objects, and CSVFor sorts them into the CSV, its install
// modes, the CRDs and the rest, with every quantity bounded first.
//
// RenderBundle turns a bundle into the objects of one release in a
// tenant's namespaces: the CSV's Deployments, its permissions as Roles
// and RoleBindings (cluster permissions on namespaced resources join
// them; the rest only from the profile's allow-list), and its admission
// webhooks as Services and configurations narrowed to the tenant, served
// with certificates from IssueWebhookCerts. The package imports neither
// the release engine nor any backend; the olm and bundle backends use it.
package registryv1
