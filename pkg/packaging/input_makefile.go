package packaging

import (
	"bufio"
	"bytes"
	"errors"
	"github.com/blang/semver/v4"
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"path/filepath"
	"strings"
)

// MakeDefaults are the packaging defaults a kubebuilder or operator-sdk
// Makefile sets: VERSION, IMG, CHANNELS and DEFAULT_CHANNEL.
type MakeDefaults struct {
	Version, Image string
	// badVersion is a VERSION that is not SemVer, which Version leaves out.
	badVersion string
	// badImage is an IMG that is not an image reference (quay.io/x/y: with
	// an empty VERSION), which Image leaves out.
	badImage       string
	Channels       []string
	DefaultChannel string
}

var (
	makeAssign = lazyre.New(`^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|:=|::=|=)\s*(.*)$`)
	makeRef    = lazyre.New(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

// maxMakeValue bounds an expanded value: nested references could
// otherwise double it at every level.
const maxMakeValue = 4096

// kubebuilderImage is the Makefile scaffold's IMG, a placeholder.
const kubebuilderImage = "controller:latest"

// loadMakeDefaults reads the top-level variable assignments of dir/Makefile
// the way make would for these simple cases: the first assignment of a
// variable wins for ?=, the last otherwise, and $(VAR) and ${VAR} expand
// from the others. A value that still names an unknown variable, a shell
// call or a function is ignored. A missing Makefile gives zero defaults.
func loadMakeDefaults(dir string) (MakeDefaults, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if errors.Is(err, os.ErrNotExist) {
		return MakeDefaults{}, nil
	}
	if err != nil {
		return MakeDefaults{}, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '\t' || line[0] == ' ' || line[0] == '#' {
			continue // recipes, indented conditionals and comments
		}
		m := makeAssign().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, op, val := m[1], m[2], m[3]
		if i := strings.Index(val, " #"); i >= 0 {
			val = val[:i]
		}
		if _, set := vars[name]; set && op == "?=" {
			continue
		}
		vars[name] = strings.TrimSpace(val)
	}
	get := func(name string) string {
		v, ok := expandMake(vars, vars[name], 0)
		if !ok {
			return ""
		}
		return strings.Trim(v, `"'`)
	}
	d := MakeDefaults{Version: get("VERSION"), Image: get("IMG"), DefaultChannel: get("DEFAULT_CHANNEL")}
	if v, err := semver.Parse(d.Version); d.Version != "" && (err != nil || v.Equals(semver.Version{})) {
		// A release flow often sets it later (VERSION ?= main, 0.0.0); the
		// package then says which version it used.
		d.badVersion, d.Version = d.Version, ""
	}
	if d.Image == kubebuilderImage {
		d.Image = ""
	}
	if d.Image != "" && !ValidImage(d.Image) {
		d.badImage, d.Image = d.Image, ""
	}
	for _, c := range strings.Split(get("CHANNELS"), ",") {
		if c = strings.TrimSpace(c); c != "" {
			d.Channels = append(d.Channels, c)
		}
	}
	return d, nil
}

// expandMake expands variable references, refusing functions and unknown
// variables.
func expandMake(vars map[string]string, v string, depth int) (string, bool) {
	if depth > 8 {
		return "", false
	}
	ok := true
	out := makeRef().ReplaceAllStringFunc(v, func(ref string) string {
		name := makeRef().FindStringSubmatch(ref)[1]
		val, known := vars[name]
		if !known {
			ok = false
			return ""
		}
		e, good := expandMake(vars, val, depth+1)
		ok = ok && good
		return e
	})
	if !ok || strings.Contains(out, "$") || len(out) > maxMakeValue {
		return "", false
	}
	return out, true
}
