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
//
// Wishes. A user may wish for a phase in the spec (Wishable: Running,
// Servicing, Stopping; Facts.Wished): the standard graph then takes
// Running to Servicing and back, and any live phase to Stopping and, once
// the application has stopped, Ended. WishRule turns the graph into the
// CEL transition rule (oldSelf) of the spec field, so the API server
// refuses a wish the graph forbids from the previous one (nothing leaves
// Stopping); opctl kit writes it, with the enum, as markers of the
// field's type.
package lifecycle
