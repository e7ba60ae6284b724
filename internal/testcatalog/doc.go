// Package testcatalog serves a file-based catalog over gRPC on loopback
// with operator-registry's own serving code, as `opm serve` does, for OLM
// CatalogSources with spec.address in tests.
package testcatalog
