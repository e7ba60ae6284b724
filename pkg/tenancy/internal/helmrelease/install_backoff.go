package helmrelease

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chart"
)

// A failed install is not tried again with the same chart (its name,
// version and templates) and values until a wait that doubles with each failure, from installBackoff
// up to maxInstallBackoff. Any event in a tenant's namespaces reconciles
// the Tenant, and an install costs tens of requests: an owner who makes
// one fail (an object of the release's name in the way) must not make
// every pod it deletes cost one. A changed spec is installed at once.
const (
	installBackoff    = 10 * time.Second
	maxInstallBackoff = 5 * time.Minute
)

// failedInstalls remembers the last failed install of each release, by
// releaseRef.
type failedInstalls struct{ failedRuns }

// wait is how long an install of ch and values must wait, at now.
func (f *failedInstalls) wait(ref string, ch *chart.Chart, values map[string]any, now time.Time) time.Duration {
	return f.waitFrom(ref, ch, values, now, installBackoff, maxInstallBackoff)
}

// failedRuns remembers the last failed run of an action (an install, an
// upgrade retried) of each release, by releaseRef, and how many of the
// same chart and values failed in a row.
type failedRuns struct {
	mu sync.Mutex
	m  map[string]failedRun
}

type failedRun struct {
	chart  string // chartIdentity
	values map[string]any
	n      int
	at     time.Time
}

// waitFrom is how long a run of ch and values must wait, at now: first
// after one failure, doubling with each, up to most; nothing for another
// chart or other values.
func (f *failedRuns) waitFrom(ref string, ch *chart.Chart, values map[string]any, now time.Time, first, most time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	last, ok := f.m[ref]
	if !ok || last.chart != chartIdentity(ch) || !sameValues(last.values, values) {
		return 0
	}
	backoff := min(first<<min(last.n-1, 10), most)
	return max(last.at.Add(backoff).Sub(now), 0)
}

// failed records a failed run of ch and values at now.
func (f *failedRuns) failed(ref string, ch *chart.Chart, values map[string]any, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]failedRun{}
	}
	last, id := f.m[ref], chartIdentity(ch)
	n := 1
	if last.chart == id && sameValues(last.values, values) {
		n = last.n + 1
	}
	f.m[ref] = failedRun{chart: id, values: values, n: n, at: now}
}

// forget drops what is remembered of ref, after a run succeeded.
func (f *failedRuns) forget(ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, ref)
}

// chartIdentity is a digest of what an install of ch renders from: its
// name, version and templates. A bundle's chart is made anew for every
// plan, so the pointer would not do.
func chartIdentity(ch *chart.Chart) string {
	h := sha256.New()
	if ch.Metadata != nil {
		h.Write([]byte(ch.Metadata.Name + "\x00" + ch.Metadata.Version + "\x00"))
	}
	for _, t := range ch.Templates {
		h.Write([]byte(t.Name + "\x00"))
		h.Write(t.Data)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
