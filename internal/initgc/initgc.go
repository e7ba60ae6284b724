package initgc

import "runtime/debug"

// saved is the GC percentage in force before this package initialised:
// the runtime's reading of GOGC.
var saved = debug.SetGCPercent(-1)

// Restore sets the GC percentage back to what it was before this package
// initialised.
func Restore() {
	debug.SetGCPercent(saved)
}
