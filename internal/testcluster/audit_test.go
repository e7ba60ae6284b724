package testcluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An offset inside a line being written, and a last line without its
// newline yet, are read around, never parsed.
func TestAuditWritesSinceSkipsPartialLines(t *testing.T) {
	c := &Cluster{Dir: t.TempDir()}
	first := `{"stage":"ResponseComplete","verb":"create","objectRef":{"name":"a"}}`
	second := `{"stage":"ResponseComplete","verb":"update","objectRef":{"name":"b"}}`
	log := first + "\n" + second + "\n" + `{"stage":"Respo`
	if err := os.WriteFile(filepath.Join(c.Dir, auditLogName), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		offset int64
		want   []string
	}{
		{"from the start", 0, []string{"a", "b"}},
		{"at a line boundary", int64(len(first) + 1), []string{"b"}},
		{"inside the first line's newline write", int64(len(first)), []string{"b"}},
		{"inside a line", 10, []string{"b"}},
	} {
		got, err := c.AuditWritesSince(tc.offset, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var names []string
		for _, e := range got {
			names = append(names, e.ObjectRef.Name)
		}
		if len(names) != len(tc.want) || (len(names) > 0 && names[len(names)-1] != tc.want[len(tc.want)-1]) || names[0] != tc.want[0] {
			t.Errorf("%s: %v, want %v", tc.name, names, tc.want)
		}
	}
}

// Reads are not writes; a user's requests are all of its lines; an
// offset past the end (a rotated log) is an error, never "no writes".
func TestAuditReadsAndRequests(t *testing.T) {
	c := &Cluster{Dir: t.TempDir()}
	lines := `{"stage":"ResponseComplete","verb":"get","user":{"username":"u"},"objectRef":{"resource":"secrets","name":"a"}}
{"stage":"ResponseComplete","verb":"patch","user":{"username":"u"},"objectRef":{"resource":"secrets","name":"b"}}
{"stage":"ResponseStarted","verb":"watch","user":{"username":"u"},"objectRef":{"resource":"roles","apiGroup":"rbac.authorization.k8s.io"}}
{"stage":"ResponseComplete","verb":"list","user":{"username":"v"},"impersonatedUser":{"username":"u"},"objectRef":{"resource":"pods"}}
`
	if err := os.WriteFile(filepath.Join(c.Dir, auditLogName), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	writes, err := c.AuditWritesSince(0, nil)
	if err != nil || len(writes) != 1 || writes[0].ObjectRef.Name != "b" {
		t.Errorf("writes %v (%v), want the patch of b only", writes, err)
	}
	reqs, err := c.AuditRequestsBy("u")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range reqs {
		got = append(got, e.Verb+" "+e.ObjectRef.APIGroup+"/"+e.ObjectRef.Resource)
	}
	if want := []string{"get /secrets", "patch /secrets", "watch rbac.authorization.k8s.io/roles"}; !slices.Equal(got, want) {
		t.Errorf("requests of u %v, want %v", got, want)
	}
	if _, err := c.AuditWritesSince(int64(len(lines)+100), nil); err == nil {
		t.Errorf("an offset past the end of the log read as no writes")
	}
}
