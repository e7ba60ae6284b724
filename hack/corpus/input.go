package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// incompleteError is a project input the corpus cannot give opctl: no
// clone, a commit or file missing from it, a remote base. It is counted
// apart from opctl's own failures, so neither hides the other.
type incompleteError struct{ msg string }

func (e *incompleteError) Error() string { return e.msg }

func incomplete(format string, args ...any) error {
	return &incompleteError{fmt.Sprintf(format, args...)}
}

func isIncomplete(err error) bool {
	var ie *incompleteError
	return errors.As(err, &ie)
}

// neededPaths are what a package reads, relative to the project: the
// kustomize tree, the API packages (markers), the PROJECT file, the
// Makefile, the Dockerfile (the manager's main package and its USER) and
// the commands; moduleSources adds the Go sources of the module.
var neededPaths = []string{"config", "PROJECT", "Makefile", "Dockerfile", "api", "apis", "cmd", "go.mod", "main.go"}

// moduleSources are pathspecs of the Go sources opctl package parses to
// see which namespaces the manager watches: every non-test .go file of the
// module holding the project (its go.mod at the project or above) and of
// the modules its go.mod replaces with local directories, without vendor/
// and testdata/.
func moduleSources(dir, commit, prefix string) []string {
	root, ok := "", false
	for d := strings.TrimSuffix(prefix, "/"); ; d = path.Dir(d) {
		if d == "." {
			d = ""
		}
		if _, err := git(dir, "cat-file", "-e", commit+":"+path.Join(d, "go.mod")); err == nil {
			root, ok = d, true
			break
		}
		if d == "" {
			break
		}
	}
	if !ok {
		return nil
	}
	roots := []string{root}
	if gomod, err := git(dir, "show", commit+":"+path.Join(root, "go.mod")); err == nil {
		for _, line := range strings.Split(string(gomod), "\n") {
			line, _, _ = strings.Cut(line, "//")
			_, repl, found := strings.Cut(line, "=>")
			f := strings.Fields(repl)
			if found && len(f) > 0 && (strings.HasPrefix(f[0], "./") || strings.HasPrefix(f[0], "../")) {
				if r := path.Join(root, f[0]); r != ".." && !strings.HasPrefix(r, "../") {
					roots = append(roots, r)
				}
			}
		}
	}
	specs := []string{}
	for _, r := range roots {
		specs = append(specs, path.Join(r, "go.mod"), ":(glob)"+path.Join(r, "**/*.go"))
	}
	return append(specs, ":(exclude,glob)**/*_test.go", ":(exclude,glob)**/vendor/**", ":(exclude,glob)**/testdata/**")
}

// gitDir finds the clone of repo in the corpus folder: <owner>+<name> (a
// bare clone, or holding repo/ or .git/) or <owner>/<name>.
func gitDir(corpus, repo string) (string, error) {
	flat := strings.Replace(repo, "/", "+", 1)
	for _, d := range []string{
		filepath.Join(corpus, flat, "repo"), filepath.Join(corpus, flat, ".git"), filepath.Join(corpus, flat),
		filepath.Join(corpus, repo, ".git"), filepath.Join(corpus, repo),
	} {
		if isGitDir(d) {
			return d, nil
		}
	}
	return "", incomplete("no clone of %s in the corpus folder (want %s/ or %s/ holding a git directory)", repo, flat, repo)
}

func isGitDir(d string) bool {
	for _, f := range []string{"HEAD", "objects"} {
		if _, err := os.Stat(filepath.Join(d, f)); err != nil {
			return false
		}
	}
	return true
}

func git(dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// checkout writes the project's files at its commit into dest: only the
// paths a package needs, or, with whole, the project's whole directory.
func checkout(dir string, p project, dest string, whole bool) error {
	if _, err := git(dir, "cat-file", "-e", p.Commit+"^{commit}"); err != nil {
		return incomplete("commit %s is not in the clone of %s: fetch it", p.Commit[:12], p.Repo)
	}
	prefix := ""
	if p.Subdir != "." {
		prefix = p.Subdir + "/"
	}
	var paths []string
	if whole {
		paths = []string{strings.TrimSuffix(prefix, "/")}
		if prefix == "" {
			paths = []string{"."}
		}
	} else {
		args := []string{"ls-tree", "--name-only", p.Commit}
		if prefix != "" {
			args = append(args, prefix)
		}
		out, err := git(dir, args...)
		if err != nil {
			return incomplete("%s is not in %s at %s", p.Subdir, p.Repo, p.Commit[:12])
		}
		have := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			have[l] = true
		}
		for _, n := range neededPaths {
			if have[prefix+n] {
				paths = append(paths, prefix+n)
			}
		}
		if !have[prefix+"config"] {
			return incomplete("%s has no config/ at %s", p.ID(), p.Commit[:12])
		}
		paths = append(paths, moduleSources(dir, p.Commit, prefix)...)
	}
	cmd := exec.Command("git", append([]string{"--git-dir=" + dir, "archive", "--format=tar", p.Commit, "--"}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	xerr := untar(out, dest)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		// A mirror may list its largest files without holding them.
		return incomplete("git archive of %s: %s", p.ID(), strings.TrimSpace(stderr.String()))
	}
	return xerr
}

// untar extracts a git archive; git writes no absolute or parent paths,
// and symlinks are kept as they are, as a checkout would.
func untar(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dest, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, name); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
