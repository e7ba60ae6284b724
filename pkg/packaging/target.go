package packaging

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Target is one output of opctl package, rendered from a loaded Project.
// The project model knows nothing of targets: a new output is a new file
// that implements Target and registers itself.
type Target interface {
	// Name is how --targets names the target.
	Name() string
	// Render returns the target's files, relative to the output directory,
	// and warnings about what it left out.
	Render(p *Project, opts PackageOptions) (Files, []string, error)
}

var (
	targetsMu sync.RWMutex
	targets   = map[string]Target{}
)

// RegisterTarget adds a target; registering a name twice panics, as it is
// a programming error.
func RegisterTarget(t Target) {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	if _, dup := targets[t.Name()]; dup {
		panic("packaging: target " + t.Name() + " registered twice")
	}
	targets[t.Name()] = t
}

// TargetNames lists the registered targets, sorted.
func TargetNames() []string {
	targetsMu.RLock()
	defer targetsMu.RUnlock()
	return sortedKeys(targets)
}

// selectTargets resolves names (all targets when empty), refusing unknown
// names.
func selectTargets(names []string) ([]Target, error) {
	if len(names) == 0 {
		names = TargetNames()
	}
	targetsMu.RLock()
	defer targetsMu.RUnlock()
	var out []Target
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		t, ok := targets[n]
		if !ok {
			return nil, fmt.Errorf("--targets %q: unknown target; use %s", n, strings.Join(sortedKeys(targets), ", "))
		}
		out = append(out, t)
	}
	return out, nil
}
