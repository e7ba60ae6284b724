package lifecycle

// Standard returns the standard application lifecycle graph.
func Standard() *Machine {
	// live guards never fire during deletion, so deletion always wins.
	live := func(ok func(Facts) bool, why string) Guard {
		return func(f Facts) (bool, string) { return !f.Deleting && ok(f), why }
	}
	deleting := func(f Facts) (bool, string) { return f.Deleting, "deletion" }
	m, err := New(Starting,
		Transition{From: Starting, To: Running, Guard: live(func(f Facts) bool { return f.Available && !f.Progressing }, "the application to become available")},
		Transition{From: Starting, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled }, "a stalled state")},
		Transition{From: Running, To: Servicing, Guard: live(func(f Facts) bool { return f.Progressing }, "a change to roll out")},
		Transition{From: Running, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled && !f.Available }, "a stalled, unavailable state")},
		Transition{From: Servicing, To: Running, Guard: live(func(f Facts) bool { return f.Available && !f.Progressing }, "the rollout to finish")},
		Transition{From: Servicing, To: Failed, Guard: live(func(f Facts) bool { return f.Stalled && !f.Available }, "a stalled, unavailable state")},
		Transition{From: Failed, To: Starting, Guard: live(func(f Facts) bool { return !f.Stalled }, "the problem to be fixed")},
		Transition{From: Starting, To: Stopping, Guard: deleting},
		Transition{From: Running, To: Stopping, Guard: deleting},
		Transition{From: Servicing, To: Stopping, Guard: deleting},
		Transition{From: Failed, To: Stopping, Guard: deleting},
		Transition{From: Stopping, To: Ended, Guard: func(f Facts) (bool, string) {
			return f.Gone, "managed objects to be removed or disconnected"
		}},
	)
	if err != nil {
		panic(err) // the standard graph is a constant; a failure is a bug here
	}
	return m
}
