package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// GoBuild builds the main package pkg into dir as `make build` does (a
// static binary: CGO_ENABLED=0, -trimpath) and returns the binary's path;
// ldflags may be empty.
func GoBuild(dir, pkg, ldflags string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-trimpath", "-o", out}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}
