// Package fbc checks the upgrade graph of file-based catalogs (FBC) on the
// declarative config itself, so that it explains problems even when the
// catalog does not convert into operator-registry's model. opctl publish
// runs it before pushing, opctl validate reports it as OPC-K001..K003.
package fbc
