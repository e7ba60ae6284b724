package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
)

// The cap opctl measures a chart's release record against is the API
// server's: Helm keeps a release in one Secret, and a Secret of one byte
// more than 1 MiB of data is refused.
func TestReleaseSecretCap(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "cap", nil)
	for _, tc := range []struct {
		size int
		ok   bool
	}{{1 << 20, true}, {1<<20 + 1, false}} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "record-"}, Data: map[string][]byte{"release": []byte(strings.Repeat("x", tc.size))}}
		_, err := c.Client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{})
		if tc.ok != (err == nil) || (!tc.ok && !strings.Contains(err.Error(), "Too long")) {
			t.Errorf("a Secret of %d bytes: %v, want ok=%t", tc.size, err, tc.ok)
		}
	}
}

// CRDs too large for Helm's release Secret install in the layout opctl
// chooses: crds/ when they fit in the record once, several CRD charts
// when they fit in no one record. Every chart installs with Helm, and the
// CRDs are there.
func TestLargeCRDLayoutsInstall(t *testing.T) {
	c := testcluster.Require(t, cluster)
	helm := filepath.Join(testcluster.RequireBinDir(t), "helm")
	ext := apiextensionsclient.NewForConfigOrDie(c.Config)
	for _, tc := range []struct {
		name    string
		n, size int
		// crdCharts is how many CRD charts the layout has at least (none
		// for crds/).
		crdCharts int
	}{
		{"crds-dir", 2, 1000 << 10, 0},
		{"several CRD charts", 5, 800 << 10, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := rand.String(5)
			dir, _ := testproject.UnderGroup(t, filepath.Join("..", "..", "operators", "sample"), "kv"+id+".example.com")
			crds := testproject.WithBigCRDs(t, dir, "big"+id+".example.com", tc.n, tc.size)
			crds = append(crds, "kvstores.kv"+id+".example.com", "kvbackups.kv"+id+".example.com")
			t.Cleanup(func() {
				for _, n := range crds {
					_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), n, metav1.DeleteOptions{})
				}
			})
			out := t.TempDir()
			if b, err := exec.Command(opctlBin, "package", dir, "--out", out).CombinedOutput(); err != nil {
				t.Fatalf("opctl package: %v\n%s", err, b)
			} else if !strings.Contains(string(b), "would fail") {
				t.Errorf("opctl package says nothing of the layout it chose:\n%s", b)
			}
			entries, _ := os.ReadDir(filepath.Join(out, "charts"))
			var crdCharts []string
			for _, e := range entries {
				if regexp.MustCompile(`-crds(-[0-9]+)?$`).MatchString(e.Name()) {
					crdCharts = append(crdCharts, filepath.Join(out, "charts", e.Name()))
				}
			}
			if len(crdCharts) < tc.crdCharts || (tc.crdCharts == 0) != (len(crdCharts) == 0) {
				t.Fatalf("%d CRD charts, want %d or more (none for crds/)", len(crdCharts), tc.crdCharts)
			}
			ns := c.Namespace(t, "big", nil)
			install := func(release, chart string, set ...string) {
				args := []string{"install", release, chart, "--kubeconfig", c.Kubeconfig, "--namespace", ns}
				for _, s := range set {
					args = append(args, "--set", s)
				}
				if b, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
					t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
				}
				t.Cleanup(func() {
					_ = exec.Command(helm, "uninstall", release, "--kubeconfig", c.Kubeconfig, "--namespace", ns).Run()
				})
			}
			for i, ch := range crdCharts {
				install("crds"+string(rune('a'+i)), ch)
			}
			set := []string{}
			if len(crdCharts) > 0 {
				set = append(set, "crds.install=false")
			}
			install("op", filepath.Join(out, "charts", "sample-operator"), set...)
			for _, n := range crds {
				if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), n, metav1.GetOptions{}); err != nil {
					t.Errorf("CRD %s after the install: %v", n, err)
				}
			}
		})
	}
}
