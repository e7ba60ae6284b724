// Package testregistry runs a real OCI registry for tests: Debian's
// docker-registry (CNCF distribution) as a process on 127.0.0.1 with a
// temporary storage directory: Start without auth over plain HTTP, StartSecure
// with TLS from a generated CA and htpasswd basic auth. A missing binary fails the test with the
// command that installs it; it never skips.
package testregistry
