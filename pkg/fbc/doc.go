// Package fbc checks the upgrade graph of file-based catalogs (FBC) on the
// declarative config itself, so that it explains problems even when the
// catalog does not convert into operator-registry's model.
//
// CheckPackage takes one olm.package, its channels and the versions of its
// bundles (Versions reads them from their olm.package property) and returns
// Problems, each of a Kind: a default channel that does not exist
// (DefaultChannelMissing), a channel with no head or several or an entry
// listed twice (HeadCount), a replaces cycle (Cycle), or entries that
// cannot upgrade to their channel's head (Unreachable). Heads finds the bundles of a channel that no other entry
// replaces or skips.
//
// opctl publish runs it on the catalog it is about to write and refuses on
// any problem; opctl validate reports the problems as OPC-K001..K003.
package fbc
