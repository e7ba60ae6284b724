// Package bundlerelease makes a registry+v1 bundle, from a bundle
// directory or resolved in a file-based catalog directory, into the Helm
// release the tenancy controller's bundle backend would install for a
// tenant, with the controller's own code (internal/registryv1): the CSV's
// deployments, its permissions and clusterPermissions as Roles in the
// tenant's namespaces or rules cluster-wide, its webhooks narrowed to the
// tenant, and its install modes checked against the tenant's namespaces.
// opctl tenancy check judges what it makes as it judges a chart.
package bundlerelease
