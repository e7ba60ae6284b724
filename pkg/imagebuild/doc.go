// Package imagebuild builds the container image of a Go program from its
// source with no container engine, the way ko does: `go build` once per
// platform (static, -trimpath, no VCS stamping), each binary laid on a
// base as one layer, and the platforms' images joined in one OCI index.
//
// The default base is scratch plus what a Go manager needs at run time,
// built in process: a CA bundle (the NSS roots Go's x509roots module pins,
// or a file given), and /etc/passwd and /etc/group naming the nonroot
// user 65532 the image runs as. A base given by reference is resolved to
// a digest first, so a build says what it was built on.
//
// Build also writes an SPDX document of the modules linked into the
// binary, read from its build information; SBOMArtifact makes the OCI
// artifact that refers to the index with it. Every output is a pure
// function of the source, the Go toolchain, the base and Options.Created:
// the same input gives the same digests.
package imagebuild
