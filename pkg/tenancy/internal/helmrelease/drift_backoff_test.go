package helmrelease

import (
	"testing"
	"time"
)

// TestRestoreBackoff: an object restored again and again is restored at
// once freeRestores times, then at doubling intervals up to
// maxRestoreWait; an object left alone for restoreQuiet starts over.
func TestRestoreBackoff(t *testing.T) {
	m := &DriftMemo{}
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const key = "ns/Deployment/web"
	steps := []struct {
		name    string
		now     time.Duration
		restore bool          // restore at now, if no wait
		want    time.Duration // the wait at now
	}{
		{"first", 0, true, 0},
		{"second", time.Second, true, 0},
		{"third", 2 * time.Second, true, 0},
		{"fourth waits", 3 * time.Second, false, 9 * time.Second},
		{"fourth after the wait", 12 * time.Second, true, 0},
		{"fifth waits twice as long", 13 * time.Second, false, 19 * time.Second},
		{"fifth", 32 * time.Second, true, 0},
		{"sixth waits 40 s", 33 * time.Second, false, 39 * time.Second},
		{"left alone for restoreQuiet", 32*time.Second + restoreQuiet, true, 0},
		{"counting starts over", 33*time.Second + restoreQuiet, true, 0},
	}
	for _, s := range steps {
		if got := m.restoreWait(key, at(s.now)); got != s.want {
			t.Fatalf("%s: wait %v, want %v", s.name, got, s.want)
		}
		if s.restore {
			m.restoredAt(key, at(s.now))
		}
	}
	if got := m.restoreWait("ns/Deployment/other", at(0)); got != 0 {
		t.Errorf("another object waits %v", got)
	}
	// A fight that restores whenever allowed settles at one restore per
	// maxRestoreWait: the longest wait does not count as quiet.
	now := at(time.Hour)
	for range 20 {
		now = now.Add(m.restoreWait(key, now))
		m.restoredAt(key, now)
	}
	if got := m.restoreWait(key, now); got != maxRestoreWait {
		t.Errorf("after a long fight: wait %v, want maxRestoreWait %v", got, maxRestoreWait)
	}
}
