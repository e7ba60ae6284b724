// Package version reports how opctl was built: its own version and commit,
// the Go toolchain, and the versions of the Kubernetes and operator libraries
// linked into the binary.
//
// The version and commit are stamped at link time:
//
//	go build -ldflags "-X opctl.dev/opctl/internal/version.version=v0.1.0 \
//	    -X opctl.dev/opctl/internal/version.commit=$(git rev-parse HEAD)"
package version
