package testcluster

import (
	"strings"
	"testing"
)

// In unit mode Require and RequireOwn skip with the reason and bring no
// control plane up.
func TestRequireSkipsInUnitMode(t *testing.T) {
	t.Setenv(EnvSkip, "1")
	for name, require := range map[string]func(testing.TB){
		"Require":    func(t testing.TB) { Require(t, nil) },
		"RequireOwn": func(t testing.TB) { RequireOwn(t, Options{}) },
	} {
		var (
			skipped bool
			reason  string
		)
		t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			require(&recorder{T: t, log: &reason})
		})
		if !skipped {
			t.Errorf("%s did not skip with %s=1", name, EnvSkip)
		}
		if !strings.Contains(reason, "make test-unit") {
			t.Errorf("%s skipped without saying why: %q", name, reason)
		}
	}
}

// recorder keeps the message a test skips with.
type recorder struct {
	*testing.T
	log *string
}

func (r *recorder) Skip(args ...any) {
	for _, a := range args {
		if s, ok := a.(string); ok {
			*r.log = s
		}
	}
	r.T.Skip(args...)
}
