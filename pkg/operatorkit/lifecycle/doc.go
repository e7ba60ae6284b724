// Package lifecycle declares an application's lifecycle as a graph of
// phases with guarded transitions:
//
//	Starting → Running ⇄ Servicing
//	    ↓          ↓         ↓
//	  Failed  ←────┴─────────┘   (and back to Starting once fixed)
//	any of them → Stopping → Ended
//
// A Machine moves an object along the graph from what a reconcile observed.
// A transition whose guard does not hold yet waits: it may take many
// reconciles. A transition the graph does not have is refused with an
// error that names the phases and the allowed targets.
package lifecycle
