package testcluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	Stage      string `json:"stage"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// writeVerbs are the verbs AuditWritesSince returns.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// AuditRequestsBy returns every request username made that the audit log
// recorded (all of them for a ServiceAccount of AuditedNamespace), once
// per request: a watch still open counts from its start.
func (c *Cluster) AuditRequestsBy(username string) ([]AuditEvent, error) {
	b, err := os.ReadFile(c.AuditLog())
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	var out []AuditEvent
	needle := []byte(`"username":"` + username + `"`)
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.Contains(line, needle) {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			continue // the last line, still being written
		}
		if e.User.Username == username && (e.Stage == "ResponseComplete" || e.Stage == "ResponseStarted") {
			out = append(out, e)
		}
	}
	return out, nil
}

// AuditOffset returns the current end of the audit log, to read the writes
// made after it with AuditWritesSince.
func (c *Cluster) AuditOffset() (int64, error) {
	fi, err := os.Stat(c.AuditLog())
	if err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return fi.Size(), nil
}

// AuditWritesSince returns the write requests (create, update, patch,
// delete) logged after offset that match keep. The API server logs in
// blocking mode, so a request that has returned is already there.
func (c *Cluster) AuditWritesSince(offset int64, keep func(AuditEvent) bool) ([]AuditEvent, error) {
	f, err := os.Open(c.AuditLog())
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	} else if fi.Size() < offset {
		return nil, fmt.Errorf("audit log: %d bytes, shorter than the offset %d: it was rotated or truncated, and the writes since are unknown", fi.Size(), offset)
	}
	// The offset may fall inside a line the API server was writing (its
	// JSON and its newline are two writes): start after that line.
	start := max(offset-1, 0)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if offset > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, nil
		}
		b = b[i+1:]
	}
	// A last line without its newline is still being written.
	lines := bytes.Split(b, []byte("\n"))
	lines = lines[:len(lines)-1]
	var out []AuditEvent
	for _, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("audit log line: %w", err)
		}
		if e.Stage != "ResponseComplete" || !writeVerbs[e.Verb] {
			continue
		}
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// WritesBy returns the writes userAgent made in namespace since offset.
func (c *Cluster) WritesBy(offset int64, userAgent, namespace string) ([]AuditEvent, error) {
	return c.AuditWritesSince(offset, func(e AuditEvent) bool {
		return e.UserAgent == userAgent && e.ObjectRef.Namespace == namespace
	})
}

// Describe lists audited writes as "verb resource/subresource name; ...".
func Describe(ws []AuditEvent) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s %s/%s %s", w.Verb, w.ObjectRef.Resource, w.ObjectRef.Subresource, w.ObjectRef.Name))
	}
	return strings.Join(parts, "; ")
}

// WritesDuring runs do and returns the writes userAgent made in namespace
// meanwhile, as the API server's audit log recorded them.
func (c *Cluster) WritesDuring(t testing.TB, userAgent, namespace string, do func()) []AuditEvent {
	t.Helper()
	off, err := c.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	do()
	w, err := c.WritesBy(off, userAgent, namespace)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// AssertNoSteadyStateWrites lets the watch events of what came before
// settle, runs reconcile n times, and fails t when userAgent wrote
// anything in namespace meanwhile: a steady-state reconcile writes
// nothing.
func (c *Cluster) AssertNoSteadyStateWrites(t testing.TB, userAgent, namespace string, n int, reconcile func() error) {
	t.Helper()
	time.Sleep(2 * time.Second)
	writes := c.WritesDuring(t, userAgent, namespace, func() {
		for range n {
			if err := reconcile(); err != nil {
				t.Fatalf("steady-state reconcile: %v", err)
			}
		}
	})
	t.Logf("steady state: %d reconciles made %d write requests (counted in the API server audit log)", n, len(writes))
	if len(writes) != 0 {
		t.Errorf("steady-state writes: %s", Describe(writes))
	}
}
