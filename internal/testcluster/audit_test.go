package testcluster

import (
	"os"
	"path/filepath"
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
