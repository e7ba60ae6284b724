// Package helmrelease is the release engine of the tenancy controller:
// the chart and bundle backends install a tenant's operator as a Helm
// release through it, so history, rollback, recovery, tamper checks and
// drift correction are the same for both.
//
// A Reconciler holds what every release needs: the clients, the
// HelmClient (Helm's actions, acting as the tenant's actor, with records
// in the controller's storage namespace: package records), the drift
// memo and the Event recorder. Reconcile takes a Request, one release of
// one tenant with the scope the guard checks it against, and works in two
// steps, as flux's helm-controller does: releaseState (state.go), a pure
// function of the release's records, the spec and the status, decides
// the phase (stuck pending, absent, failed, failed with no way back,
// held after a rollback, out of sync, progressing, timed out or ready),
// and one action acts on it, each in a file of its own: recover.go,
// install.go, upgrade.go, rollback.go, upgrade_retry.go and await.go. A release in sync has its objects compared with its
// manifest and restored where they drifted (drift.go, with the ignore
// rules of drift_ignore.go), acting as the tenant's actor.
//
// Uninstall and HandBack serve the deletion policies; records an older
// controller left in a tenant namespace are deleted unread (legacy.go).
// The package imports no backend.
package helmrelease
