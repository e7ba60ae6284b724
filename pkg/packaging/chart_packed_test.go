package packaging

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
)

// withBigConvertedCRDs is the conversion fixture, under group, with n
// extra CRDs of
// size bytes each that its webhook converts: together they fit no one
// release record, and one alone is over the packing's estimate but fits a
// record of its own (the shape of operators that embed pod templates in
// converted APIs).
func withBigConvertedCRDs(t *testing.T, group string, n, size int) (string, []string) {
	t.Helper()
	dir := copyProject(t, conversionDir)
	replaceInTree(t, dir, "conv.example.com", group)
	bases := filepath.Join(dir, "config", "crd", "bases")
	for _, kind := range []string{"widgets", "gadgets"} {
		if err := os.Rename(filepath.Join(bases, "conv.example.com_"+kind+".yaml"), filepath.Join(bases, group+"_"+kind+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	names := testproject.WithBigCRDs(t, dir, "big."+group, n, size)
	for _, name := range names {
		plural, _, _ := strings.Cut(name, ".")
		testproject.Edit(t, filepath.Join(dir, "config", "crd", "bases", plural+".yaml"), func(s string) string {
			return strings.Replace(s, "spec:\n  group:", "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        service: {name: webhook-service, namespace: system, path: /convert}\n  group:", 1)
		})
	}
	return dir, names
}

// CRDs a webhook converts that fit no one release record are packed into
// CRD charts of their own, which name the release whose webhook Service
// converts them; each record fits, and the charts install with the helm
// CLI: the CRDs call an existing Service at its port and trust the main
// release's CA.
func TestPackedConvertedCRDsInstall(t *testing.T) {
	c := testcluster.Require(t, testCluster)
	id := rand.String(5)
	dir, names := withBigConvertedCRDs(t, "conv"+id+".example.com", 3, 1200<<10)
	out, res := packageTo(t, dir, PackageOptions{})
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "hold the CRDs a webhook converts: install them after conv-operator") && strings.Contains(w, "conversion.release")
	}) {
		t.Fatalf("warnings %q: want the packed layout, naming the charts to install after conv-operator", res.Warnings)
	}
	var plain, converting []string
	for _, root := range res.Roots {
		if !strings.HasPrefix(root, "charts/conv-operator-crds") {
			continue
		}
		files := readChart(t, out, root)
		if n, err := releaseRecordBytes(files, root+"/"); err != nil || n > MaxReleaseRecordBytes {
			t.Errorf("%s: release record %d bytes (%v), over %d", root, n, err, MaxReleaseRecordBytes)
		}
		if bytes.Contains(files[root+"/values.yaml"], []byte("conversion:")) {
			converting = append(converting, root)
		} else {
			plain = append(plain, root)
		}
	}
	if len(converting) < 2 {
		t.Fatalf("CRD charts %v hold the converted CRDs, want them spread over several", converting)
	}
	main := filepath.Join(out, "charts", "conv-operator")
	if text := string(readFile(t, filepath.Join(main, "templates", "webhooks.yaml"))); strings.Contains(text, "kind: CustomResourceDefinition") {
		t.Errorf("the main chart still templates the converted CRDs")
	}

	helm := filepath.Join(testcluster.RequireBinDir(t), "helm")
	ns := c.Namespace(t, "packed", nil)
	run := func(args ...string) {
		t.Helper()
		args = append(args, "--kubeconfig", c.Kubeconfig, "--namespace", ns)
		if b, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	api := apiextensionsclient.NewForConfigOrDie(c.Config)
	t.Cleanup(func() {
		for _, name := range append(names, "widgets."+"conv"+id+".example.com", "gadgets."+"conv"+id+".example.com") {
			_ = api.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	for i, ch := range plain {
		run("install", fmt.Sprintf("crds-%d", i), filepath.Join(out, ch))
	}
	run("install", "conv", main)
	for i, ch := range converting {
		run("install", fmt.Sprintf("conv-crds-%d", i), filepath.Join(out, ch), "--set", "conversion.release=conv")
	}

	ctx := t.Context()
	secrets, err := c.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ca []byte
	records := 0
	for _, s := range secrets.Items {
		switch {
		case s.Type == "helm.sh/release.v1":
			records++
			if n := len(s.Data["release"]); n > MaxReleaseRecordBytes {
				t.Errorf("release record %s: %d bytes", s.Name, n)
			}
		case s.Type == corev1.SecretTypeTLS:
			ca = s.Data["ca.crt"]
		}
	}
	if want := len(plain) + 1 + len(converting); records != want {
		t.Errorf("%d release records, want %d", records, want)
	}
	services, err := c.Client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(names, "widgets.conv"+id+".example.com") {
		crd, err := api.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conv := crd.Spec.Conversion
		if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || conv.Webhook.ClientConfig.Service == nil {
			t.Errorf("%s: conversion %+v, want the release's webhook", name, conv)
			continue
		}
		cc := conv.Webhook.ClientConfig
		if !slices.ContainsFunc(services.Items, func(s corev1.Service) bool {
			return s.Name == cc.Service.Name && s.Namespace == cc.Service.Namespace && slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return cc.Service.Port != nil && p.Port == *cc.Service.Port })
		}) {
			t.Errorf("%s: conversion calls %s/%s port %v, which no Service of the release serves", name, cc.Service.Namespace, cc.Service.Name, cc.Service.Port)
		}
		if want, _ := base64.StdEncoding.DecodeString(string(ca)); len(ca) == 0 || !bytes.Equal(cc.CABundle, ca) && !bytes.Equal(cc.CABundle, want) {
			t.Errorf("%s: caBundle is not the release's CA", name)
		}
	}
}

// readChart reads the chart under out/root, by slash path from out.
func readChart(t *testing.T, out, root string) Files {
	t.Helper()
	files := Files{}
	err := filepath.WalkDir(filepath.Join(out, root), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files[filepath.ToSlash(rel)] = readFile(t, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
