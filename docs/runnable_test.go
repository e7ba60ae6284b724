package docs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testregistry"
)

// The tags a runnable marker may carry.
const (
	tagRegistry = "registry" // a local OCI registry; REGISTRY is its host:port
	tagCluster  = "cluster"  // the test control plane; KUBECONFIG is its admin kubeconfig
)

// blockTimeout bounds one runnable block.
const blockTimeout = 5 * time.Minute

// skipCopy are the paths (relative to root) a scratch copy leaves out: git's
// store, built binaries and the sample's git-ignored outputs.
var skipCopy = []string{".git", "bin", "dist", "operators/sample/charts", "operators/sample/bundle"}

func TestRunnableBlocks(t *testing.T) {
	docs, err := loadDocs()
	if err != nil {
		t.Fatal(err)
	}
	var opctlBin string
	ran := 0
	for _, d := range docs {
		var blocks []block
		for _, b := range d.blocks {
			if b.runnable {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		ran += len(blocks)
		if opctlBin == "" {
			dir := t.TempDir()
			if opctlBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/cmd/opctl", ""); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(d.path, func(t *testing.T) { runFile(t, blocks, filepath.Dir(opctlBin)) })
	}
	if ran == 0 {
		t.Fatal("no runnable blocks in the docs: the README's quick starts should be")
	}
}

// runFile runs a file's runnable blocks in order in one scratch copy of the
// repository; the first failure stops the rest, which may depend on it.
func runFile(t *testing.T, blocks []block, binDir string) {
	needs := map[string]bool{}
	for _, b := range blocks {
		for _, tag := range b.tags {
			if tag != tagRegistry && tag != tagCluster {
				t.Fatalf("%s:%d: unknown runnable tag %q (known: %s, %s)", b.file, b.line, tag, tagRegistry, tagCluster)
			}
			needs[tag] = true
		}
	}
	home := t.TempDir()
	path := binDir + string(os.PathListSeparator) + os.Getenv("PATH")
	env := []string{"HOME=" + home, "DOCKER_CONFIG=" + filepath.Join(home, ".docker")}
	// A new HOME, but the Go caches a user has (opctl publish runs go build).
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	if needs[tagCluster] {
		c := testcluster.Require(t, cluster)
		env = append(env, "KUBECONFIG="+c.Kubeconfig)
		path = testcluster.RequireBinDir(t) + string(os.PathListSeparator) + path
	}
	if needs[tagRegistry] {
		env = append(env, "REGISTRY="+testregistry.Start(t).Host)
	}
	env = append(env, "PATH="+path)
	work := t.TempDir()
	if err := copyRepo(work); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if out, err := runBlock(work, env, b); err != nil {
			t.Fatalf("%s:%d: runnable block failed: %v\n--- block\n%s\n--- output\n%s", b.file, b.line, err, b.text, out)
		}
	}
}

// runBlock runs one block with bash -euo pipefail in dir.
func runBlock(dir string, env []string, b block) ([]byte, error) {
	if b.info != "sh" && b.info != "bash" && b.info != "shell" {
		return nil, fmt.Errorf("a runnable block must be sh or bash, not %q", b.info)
	}
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.text)
	cmd.Dir = dir
	cmd.Env = append(withoutKeys(os.Environ(), env), env...)
	cmd.WaitDelay = 10 * time.Second
	return cmd.CombinedOutput()
}

// withoutKeys drops from base the variables that set defines.
func withoutKeys(base, set []string) []string {
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			out = append(out, kv)
		}
	}
	return out
}

// copyRepo copies the repository's files, but skipCopy, into dst.
func copyRepo(dst string) error {
	return filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if slices.Contains(skipCopy, filepath.ToSlash(rel)) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(target, 0o755)
		case e.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !e.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}
