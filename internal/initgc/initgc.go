package initgc

import _ "unsafe" // for go:linkname

// setGCPercent is runtime/debug.SetGCPercent's implementation, which the
// runtime provides under this name (a push linkname). Calling it directly
// rather than through runtime/debug keeps this package free of imports, so
// it initialises before the heavy packages instead of after runtime/debug's
// own dependencies.
//
//go:linkname setGCPercent runtime/debug.setGCPercent
func setGCPercent(int32) int32

// saved is the GC percentage in force before init switched the collector
// off: the runtime's reading of GOGC.
var saved = setGCPercent(-1)

// Restore sets the GC percentage back to what it was before this package
// initialised. Calling it again has no further effect.
func Restore() {
	setGCPercent(saved)
}
