package lifecycle

// Wishable are the phases of the standard graph a user may wish for in
// the spec: the others are outcomes.
var Wishable = []Phase{Running, Servicing, Stopping}

// Standard returns the standard application lifecycle graph. A wish in
// the spec (Facts.Wished) takes Running to Servicing and back, and any
// live phase to Stopping, then Ended once the application has stopped;
// nothing leaves Ended.
func Standard() *Machine {
	// live guards never fire during deletion or a wish to stop, so these
	// always win.
	live := func(ok func(Facts) bool, why string) Guard {
		return func(f Facts) (bool, string) { return !f.Deleting && f.Wished != Stopping && ok(f), why }
	}
	stopping := func(f Facts) (bool, string) { return f.Deleting || f.Wished == Stopping, "deletion" }
	m, err := New(Starting,
		Transition{From: Starting, To: Running, Guard: live(func(f Facts) bool { return f.Available && !f.Progressing }, "the application to become available")},
		Transition{From: Starting, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled }, "a stalled state")},
		Transition{From: Running, To: Servicing, Guard: live(func(f Facts) bool { return f.Progressing || f.Wished == Servicing }, "a change to roll out")},
		Transition{From: Running, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled && !f.Available }, "a stalled, unavailable state")},
		Transition{From: Servicing, To: Running, Guard: live(func(f Facts) bool { return f.Available && !f.Progressing && f.Wished != Servicing }, "the rollout to finish")},
		Transition{From: Servicing, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled && !f.Available }, "a stalled, unavailable state")},
		Transition{From: Failed, To: Starting, Guard: live(func(f Facts) bool { return !f.Stalled }, "the problem to be fixed")},
		Transition{From: Starting, To: Stopping, Guard: stopping},
		Transition{From: Running, To: Stopping, Guard: stopping},
		Transition{From: Servicing, To: Stopping, Guard: stopping},
		Transition{From: Failed, To: Stopping, Guard: stopping},
		Transition{From: Stopping, To: Ended, Guard: func(f Facts) (bool, string) {
			if !f.Deleting && f.Wished == Stopping {
				return f.Gone, "the application to stop"
			}
			return f.Gone, "managed objects to be removed or disconnected"
		}},
	)
	if err != nil {
		panic(err) // the standard graph is a constant; a failure is a bug here
	}
	return m
}
