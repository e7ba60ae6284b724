// Package publish ships the output of `opctl package` to an OCI registry
// without a container engine: the OLM bundle as an image built in process,
// the bundle added to a file-based catalog (FBC) whose upgrade graph is
// checked before anything is pushed, the catalog as an image, and the Helm
// chart as an OCI artifact (and, if asked, into a classic chart
// repository).
//
// Publish is the flow. It reads the bundle and chart that opctl package
// wrote, as Options name them; builds the bundle image; plans the catalog
// edit (the bundle's channels and upgrade edges), checks its graph with
// package fbc and builds the catalog image; archives the chart; and checks
// every tag against the registry. Only when all of that holds does it push
// by digest, set the tags and write the local catalog. Result lists every
// Artifact with its action (pushed, unchanged, would push, overwritten) and
// a CatalogResult with the channel changes; Options.DryRun stops before any
// write.
//
// Every artifact is reproducible: the same input gives the same digests, so
// publishing the same version twice is a no-op, and publishing different
// content under a published version is refused unless forced.
package publish
