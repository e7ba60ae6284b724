package testcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitEventNotes waits until the Events of reason about the object named
// name in namespace carry every one of want among their notes (such as
// the "Running → Servicing" of operatorkit's PhaseChanged Events).
func WaitEventNotes(t testing.TB, cl client.Client, namespace, name, reason string, timeout time.Duration, want ...string) {
	t.Helper()
	Eventually(t, timeout, reason+" Events", func(ctx context.Context) error {
		var evs eventsv1.EventList
		if err := cl.List(ctx, &evs, client.InNamespace(namespace)); err != nil {
			return err
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == reason && e.Regarding.Name == name {
				seen = append(seen, e.Note)
			}
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(seen, "\n"), w) {
				return fmt.Errorf("no %q among %q", w, seen)
			}
		}
		return nil
	})
}
