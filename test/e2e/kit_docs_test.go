package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

// shBlocks are the fenced sh blocks of a Markdown page, in order.
func shBlocks(page string) []string {
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n").FindAllStringSubmatch(page, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestKitDocsPage runs every sh block of docs/kit.md, as written and in
// order, in one shell in an empty directory: from opctl kit init to a
// Hello that is Ready on the test control plane, offline.
func TestKitDocsPage(t *testing.T) {
	c := testcluster.Require(t, cluster)
	bin := testcluster.RequireBinDir(t)
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "kit.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(string(page))
	if len(blocks) < 5 {
		t.Fatalf("docs/kit.md has %d sh blocks; the page lost its commands", len(blocks))
	}
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The harness only: stop what the page started in the background if a
	// command fails before the page stops it.
	script := "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + strings.Join(blocks, "\n")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(opctlBin)+string(os.PathListSeparator)+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OPCTL_SRC="+src, "KUBECONFIG="+c.Kubeconfig, "GOPROXY=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(cmd.Dir, "hello-operator", "manager.log"))
		t.Fatalf("docs/kit.md commands: %v\n%s\nmanager log:\n%s", err, out, log)
	}
	for _, want := range []string{"wrote internal/controller/hello_web_resource.go", "condition met", "Running\n", "deployment.apps/hello-sample-web", "configmap/hello-sample-greeting", "packaged hello-operator", "level 1/5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the page's commands did not print %q:\n%s", want, out)
		}
	}
}
