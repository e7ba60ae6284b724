// Package e2e holds end-to-end tests that build the opctl binary and run it
// as a user would, against the test control plane where a command needs a
// cluster.
package e2e
