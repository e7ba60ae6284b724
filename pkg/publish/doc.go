// Package publish ships the output of `opctl package` to an OCI registry
// without a container engine: the OLM bundle as an image built in process,
// the bundle added to a file-based catalog (FBC) whose upgrade graph is
// checked before anything is pushed, the catalog as an image, and the Helm
// chart as an OCI artifact.
//
// Every artifact is reproducible: the same input gives the same digests, so
// publishing the same version twice is a no-op and publishing a different
// content under a published version is refused (unless forced). Nothing is
// tagged and the local catalog is not written until every artifact has been
// built, validated and checked against the registry.
package publish
