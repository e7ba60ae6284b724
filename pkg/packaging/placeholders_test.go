package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const placeholdersDir = "testdata/placeholders"

// requiredPlaceholders are the values the placeholders fixture needs.
func requiredPlaceholders() map[string]any {
	return map[string]any{
		"placeholders": map[string]any{"CLUSTER_NAME": "c1", "REGISTRY": "registry.example/team"},
		"images":       map[string]any{"helper": "registry.example/team/helper:v2"},
	}
}

// With the required values set, the chart renders no placeholder outside
// the CRDs, each filled in place; the CRD's ${SIZE} text stays.
func TestPlaceholdersRender(t *testing.T) {
	out, res := packageTo(t, placeholdersDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "phdemo")
	rendered := render(t, dir, "ns", requiredPlaceholders())
	crdText := false
	for _, doc := range renderedDocs(t, rendered) {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if doc["kind"] == "CustomResourceDefinition" {
			crdText = strings.Contains(text, "as in ${SIZE}; the text ${SIZE} stays as written")
			continue
		}
		if left := PlaceholdersIn(doc); len(left) > 0 {
			t.Errorf("%s %v renders placeholders %v: %s", doc["kind"], doc["metadata"], left, text)
		}
	}
	if !crdText {
		t.Error("the CRD's description lost its ${SIZE} text")
	}
	var cm corev1.ConfigMap
	renderedObject(t, rendered, "ConfigMap", "settings", &cm)
	want := map[string]string{"helperImage": "registry.example/team/helper:v1", "logLevel": "info", "cluster": "c1", "setup.sh": "#!/bin/sh\ncd \"${HOME}\"\n"}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("ConfigMap %s = %q, want %q", k, cm.Data[k], v)
		}
	}
	var d appsv1.Deployment
	renderedObject(t, rendered, "Deployment", "controller-manager", &d)
	c := d.Spec.Template.Spec.Containers[0]
	for _, a := range []string{"--leader-election-namespace=kube-system", "--cluster-name=c1"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %q", c.Args, a)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["REGISTRY"] != "registry.example/team" || env["LOG_FORMAT"] != "json" || env["RELATED_IMAGE_HELPER"] != "registry.example/team/helper:v2" {
		t.Errorf("env %v: want REGISTRY, LOG_FORMAT and RELATED_IMAGE_HELPER filled", env)
	}

	// The defaults' forms: := and :- take the default for an empty value,
	// = keeps it empty.
	vals := requiredPlaceholders()
	vals["placeholders"].(map[string]any)["LOG_FORMAT"] = ""
	vals["placeholders"].(map[string]any)["LOG_LEVEL"] = ""
	vals["placeholders"].(map[string]any)["TAG"] = "v3"
	rendered = render(t, dir, "ns", vals)
	renderedObject(t, rendered, "ConfigMap", "settings", &cm)
	if cm.Data["logLevel"] != "" || cm.Data["helperImage"] != "registry.example/team/helper:v3" {
		t.Errorf("ConfigMap %v: want logLevel empty and helperImage at v3", cm.Data)
	}
	renderedObject(t, rendered, "Deployment", "controller-manager", &d)
	if e := d.Spec.Template.Spec.Containers[0].Env; !slices.Contains(e, corev1.EnvVar{Name: "LOG_FORMAT", Value: "json"}) {
		t.Errorf("env %v: want LOG_FORMAT at its default for an empty value", e)
	}

	// Each required value missing fails the render, naming it.
	for _, missing := range []string{"placeholders.CLUSTER_NAME", "placeholders.REGISTRY", "images.helper"} {
		vals := requiredPlaceholders()
		group, key, _ := strings.Cut(missing, ".")
		delete(vals[group].(map[string]any), key)
		_, err := renderErr(dir, "ns", vals)
		if err == nil || !strings.Contains(err.Error(), missing+" is required") {
			t.Errorf("without %s: render error %v, want one naming it", missing, err)
		}
	}

	if got := len(res.Placeholders); got != 6 || len(res.KoImages) != 1 || res.KoImages[0].Name != "helper" {
		t.Errorf("result placeholders %+v, ko images %+v: want 6 and helper", res.Placeholders, res.KoImages)
	}
}

// The CRD carrying ${…} text is byte-identical in the chart and the
// bundle to the CRD opctl renders without placeholders in mind.
func TestPlaceholdersLeaveCRDs(t *testing.T) {
	out, _ := packageTo(t, placeholdersDir, PackageOptions{Load: Options{SetEnv: map[string]string{"SIZE": "3"}}})
	p, err := Load(placeholdersDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.analyze()
	if err != nil {
		t.Fatal(err)
	}
	const name = "widgets.apps.example.com"
	want, err := crdTemplateText(a.crdTexts[name])
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(out, "charts", "phdemo", "templates", "crds", name+".yaml")); string(got) != want {
		t.Errorf("the chart's CRD differs from its text:\n%s", got)
	}
	if got := readFile(t, filepath.Join(out, "bundle", "phdemo", "manifests", "apps.example.com_widgets.yaml")); string(got) != string(a.crdTexts[name]) {
		t.Errorf("the bundle's CRD differs from its text:\n%s", got)
	}
}

// --set-env fills the bundle and sets the chart's defaults; what it
// leaves is a warning naming the variables.
func TestSetEnv(t *testing.T) {
	tests := []struct {
		env      map[string]string
		leftVars string // "" when no placeholder warning is due
	}{
		{nil, "CLUSTER_NAME, REGISTRY"},
		{map[string]string{"CLUSTER_NAME": "c1"}, "REGISTRY"},
		{map[string]string{"CLUSTER_NAME": "c1", "REGISTRY": "registry.example/team", "LOG_LEVEL": "debug"}, ""},
	}
	for _, tt := range tests {
		out, res := packageTo(t, placeholdersDir, PackageOptions{Load: Options{SetEnv: tt.env}})
		i := slices.IndexFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--set-env") })
		switch {
		case tt.leftVars == "" && i >= 0:
			t.Errorf("env %v: warning %q, want none", tt.env, res.Warnings[i])
		case tt.leftVars != "" && (i < 0 || !strings.Contains(res.Warnings[i], "placeholders "+tt.leftVars+",")):
			t.Errorf("env %v: warnings %q, want one naming %s", tt.env, res.Warnings, tt.leftVars)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "ko://example.com/phdemo/cmd/helper") }) {
			t.Errorf("env %v: warnings %q, want one naming the ko image", tt.env, res.Warnings)
		}
		csv := string(readFile(t, filepath.Join(out, "bundle", "phdemo", "manifests", "phdemo.clusterserviceversion.yaml")))
		cm := string(readFile(t, filepath.Join(out, "bundle", "phdemo", "manifests", "phdemo-settings_v1_configmap.yaml")))
		for v, val := range tt.env {
			if strings.Contains(csv+cm, "${"+v) {
				t.Errorf("env %v: the bundle keeps ${%s}", tt.env, v)
			}
			values := string(readFile(t, filepath.Join(out, "charts", "phdemo", "values.yaml")))
			if !strings.Contains(values, "  "+v+": "+val+"\n") {
				t.Errorf("env %v: values.yaml lacks the default %s: %s", tt.env, v, val)
			}
		}
		// Defaults fill the bundle: := and = alike.
		image := "${REGISTRY}/helper:v1"
		if r := tt.env["REGISTRY"]; r != "" {
			image = r + "/helper:v1"
		}
		if !strings.Contains(csv, "--leader-election-namespace=kube-system") || !strings.Contains(cm, image) {
			t.Errorf("env %v: the bundle lacks the placeholders' defaults:\n%s", tt.env, cm)
		}
		if tt.env["LOG_LEVEL"] == "debug" && !strings.Contains(cm, "logLevel: debug") {
			t.Errorf("env %v: the ConfigMap lacks logLevel debug:\n%s", tt.env, cm)
		}
	}
}

func TestParseSetEnv(t *testing.T) {
	tests := []struct {
		in   []string
		want map[string]string
		err  string
	}{
		{[]string{"A=b", "B_2=x=y", "EMPTY="}, map[string]string{"A": "b", "B_2": "x=y", "EMPTY": ""}, ""},
		{[]string{"NOEQUALS"}, nil, `--set-env "NOEQUALS": want VAR=value`},
		{[]string{"1A=b"}, nil, `"1A" is not a variable name`},
		{[]string{"A-B=c"}, nil, `"A-B" is not a variable name`},
		{[]string{"=c"}, nil, `"" is not a variable name`},
	}
	for _, tt := range tests {
		got, err := ParseSetEnv(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSetEnv(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("ParseSetEnv(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("ParseSetEnv(%q)[%s] = %q, want %q", tt.in, k, got[k], v)
			}
		}
	}
}

// A project without placeholders renders no placeholders helper.
func TestNoPlaceholdersNoHelper(t *testing.T) {
	out, res := packageTo(t, filepath.Join("testdata", "allns"), PackageOptions{})
	b, err := os.ReadFile(filepath.Join(out, "charts", "allns", "templates", "_helpers.tpl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "placeholders") || len(res.Placeholders) > 0 {
		t.Errorf("a project without placeholders got the helper or %v", res.Placeholders)
	}
}

// A manager image built by ko is the required images.<name> value; the
// image.* values are then unused, and say so.
func TestKoManagerImage(t *testing.T) {
	const ko = "ko://example.com/phdemo/cmd/manager"
	out, res := packageTo(t, placeholdersDir, PackageOptions{Load: Options{Image: ko}})
	dir := filepath.Join(out, "charts", "phdemo")
	vals := requiredPlaceholders()
	vals["images"].(map[string]any)["manager"] = "registry.example/team/manager@sha256:0123"
	var d appsv1.Deployment
	renderedObject(t, render(t, dir, "ns", vals), "Deployment", "controller-manager", &d)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example/team/manager@sha256:0123" {
		t.Errorf("manager image %q, want images.manager", got)
	}
	delete(vals["images"].(map[string]any), "manager")
	if _, err := renderErr(dir, "ns", vals); err == nil || !strings.Contains(err.Error(), "images.manager is required: the project's manifests name "+ko) {
		t.Errorf("without images.manager: %v, want an error naming it and the ko path", err)
	}
	values := string(readFile(t, filepath.Join(dir, "values.yaml")))
	if !strings.Contains(values, "Unused: the project's release builds the operator image with ko ("+ko+")") {
		t.Errorf("values.yaml does not say image.repository is unused:\n%s", values)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, ko) && strings.Contains(w, "--image") }) {
		t.Errorf("warnings %q: want one naming %s", res.Warnings, ko)
	}
}
