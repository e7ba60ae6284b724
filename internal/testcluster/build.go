package testcluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// GoBuild builds the main package pkg into dir and returns the binary's
// path; ldflags may be empty.
func GoBuild(dir, pkg, ldflags string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", out}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	if b, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}
