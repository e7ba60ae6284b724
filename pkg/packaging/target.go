package packaging

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// Target is one output of opctl package, rendered from a loaded Project.
// The project model knows nothing of targets: a new output is a new file
// that implements Target and registers itself in its init function. The
// CLI builds the target's flags, and its --<name>-only flag, from the
// registry; validate finds its output through Dir.
type Target interface {
	// Name is how --targets names the target.
	Name() string
	// Description names the output in help text, like "the Helm chart".
	Description() string
	// Dir is the folder under the output directory that receives the
	// target's packages, like charts for charts/<name>.
	Dir() string
	// NewOptions returns the target's options at their defaults.
	NewOptions() TargetOptions
	// Render returns the target's files, relative to the output directory
	// and under Dir, and warnings about what it left out. opts is a value
	// NewOptions returned.
	Render(p *Project, opts TargetOptions) (Files, []string, error)
}

// TargetOptions are the options of one target.
type TargetOptions interface {
	// AddFlags binds the options to flags of opctl package.
	AddFlags(fs *pflag.FlagSet)
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

// Targets returns the registered targets, sorted by name.
func Targets() []Target {
	ts, _ := selectTargets(nil)
	return ts
}

// TargetDir returns the folder, relative to the output directory, that
// holds the package name of target, like charts/<name>; ok is false for an
// unknown target.
func TargetDir(target, name string) (dir string, ok bool) {
	targetsMu.RLock()
	defer targetsMu.RUnlock()
	t, ok := targets[target]
	if !ok {
		return "", false
	}
	return t.Dir() + "/" + name, true
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
