package packaging

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const placeholderValuesDir = "testdata/placeholdervalues"

// renderManager renders the placeholdervalues chart with vals and returns
// its manager pod, failing the test where anything outside the CRDs still
// holds a placeholder.
func renderManager(t *testing.T, dir string, vals map[string]any) corev1.PodSpec {
	t.Helper()
	rendered := render(t, dir, "ns", vals)
	for name, text := range rendered {
		if strings.Contains(text, "${") && !strings.Contains(name, "/crds/") {
			t.Errorf("%s renders a placeholder:\n%s", name, text)
		}
	}
	var d appsv1.Deployment
	renderedObject(t, rendered, "Deployment", "controller-manager", &d)
	return d.Spec.Template.Spec
}

// affinityKey is the node label the manager's affinity prefers.
func affinityKey(t *testing.T, pod corev1.PodSpec) string {
	t.Helper()
	if a := pod.Affinity; a != nil && a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 1 {
		if m := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions; len(m) == 1 {
			return m[0].Key
		}
	}
	t.Fatalf("affinity %+v: want one preferred term of one expression", pod.Affinity)
	return ""
}

// Placeholders in values the chart takes from the manager (affinity,
// tolerations, nodeSelector, priorityClassName, args, a resources
// quantity) are filled where the template renders them: placeholders.VAR
// changes every place its placeholder was, and setting the value itself
// replaces the project's. One in a number is read with its default.
func TestPlaceholdersInValues(t *testing.T) {
	out, res := packageTo(t, placeholderValuesDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "pvdemo")
	const cp = "node-role.kubernetes.io/control-plane"
	vals := func(kv ...any) map[string]any {
		phs := map[string]any{"NODE_POOL": "pool-a"}
		top := map[string]any{"placeholders": phs}
		for i := 0; i < len(kv); i += 2 {
			k := kv[i].(string)
			if v, ok := strings.CutPrefix(k, "placeholders."); ok {
				phs[v] = kv[i+1]
			} else {
				top[k] = kv[i+1]
			}
		}
		return top
	}

	// The defaults: each placeholder takes its default, the required one
	// its value.
	pod := renderManager(t, dir, vals())
	if got := affinityKey(t, pod); got != cp {
		t.Errorf("affinity key %q, want %q", got, cp)
	}
	if len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != cp {
		t.Errorf("tolerations %+v, want the key %q", pod.Tolerations, cp)
	}
	if pod.NodeSelector["example.com/pool"] != "pool-a" || pod.PriorityClassName != "system-cluster-critical" {
		t.Errorf("nodeSelector %v, priorityClassName %q: want pool-a and system-cluster-critical", pod.NodeSelector, pod.PriorityClassName)
	}
	if args := pod.Containers[0].Args; !slices.Contains(args, "--v=0") {
		t.Errorf("args %q lack --v=0", args)
	}
	if cpu := pod.Containers[0].Resources.Limits.Cpu().String(); cpu != "500m" || *pod.TerminationGracePeriodSeconds != 10 {
		t.Errorf("cpu limit %s, terminationGracePeriodSeconds %d: want 500m and 10", cpu, *pod.TerminationGracePeriodSeconds)
	}
	pod = renderManager(t, dir, vals("placeholders.CPU_LIMIT", "2"))
	if cpu := pod.Containers[0].Resources.Limits.Cpu().String(); cpu != "2" {
		t.Errorf("CPU_LIMIT 2: cpu limit %s", cpu)
	}

	// placeholders.CP_LABEL changes the affinity and the tolerations alike;
	// text JSON or YAML would quote stays as given.
	for _, label := range []string{"example.com/control-plane", `we"ird: <&>`} {
		pod = renderManager(t, dir, vals("placeholders.CP_LABEL", label))
		if got := affinityKey(t, pod); got != label {
			t.Errorf("CP_LABEL %q: affinity key %q", label, got)
		}
		if len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != label {
			t.Errorf("CP_LABEL %q: tolerations %+v", label, pod.Tolerations)
		}
	}

	// Setting the value itself replaces the project's, placeholders and
	// all: without its nodeSelector, NODE_POOL is no longer required.
	own := map[string]any{"nodeAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
		map[string]any{"weight": 1, "preference": map[string]any{"matchExpressions": []any{map[string]any{"key": "mine", "operator": "Exists"}}}},
	}}}
	v := vals("affinity", own, "placeholders.CP_LABEL", "example.com/cp", "nodeSelector", nil)
	delete(v["placeholders"].(map[string]any), "NODE_POOL")
	pod = renderManager(t, dir, v)
	if got := affinityKey(t, pod); got != "mine" {
		t.Errorf("affinity key %q, want the value's own", got)
	}
	if len(pod.NodeSelector) != 0 || pod.Tolerations[0].Key != "example.com/cp" {
		t.Errorf("nodeSelector %v, tolerations %+v: want none and example.com/cp", pod.NodeSelector, pod.Tolerations)
	}
	if _, err := renderErr(dir, "ns", map[string]any{}); err == nil || !strings.Contains(err.Error(), "placeholders.NODE_POOL is required") {
		t.Errorf("without placeholders.NODE_POOL: %v, want an error naming it", err)
	}

	// values.yaml keeps the placeholders as written and says what fills them.
	var values map[string]any
	text := readFile(t, filepath.Join(dir, "values.yaml"))
	if err := yaml.Unmarshal(text, &values); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(values["affinity"])
	r, _ := json.Marshal(values["resources"])
	if !strings.Contains(string(b), "${CP_LABEL:="+cp+"}") || !strings.Contains(string(text), "Holds ${CP_LABEL:="+cp+"}: the chart fills it from placeholders.CP_LABEL.") || !strings.Contains(string(r), "${CPU_LIMIT:=500m}") {
		t.Errorf("values.yaml: want the affinity and resources as written and a doc naming placeholders.CP_LABEL:\n%s", text)
	}
	var names []string
	for _, ph := range res.Placeholders {
		names = append(names, ph.Var)
	}
	if want := []string{"CPU_LIMIT", "CP_LABEL", "IAM_ROLE", "LOG_LEVEL", "NODE_POOL", "PRIORITY_CLASS"}; !slices.Equal(names, want) {
		t.Errorf("result placeholders %q, want %q (GRACE_SECONDS is read with its default)", names, want)
	}
}

// The bundle fills the same placeholders from their defaults and
// --set-env, and warns of those left, as it does elsewhere.
func TestPlaceholdersInValuesBundle(t *testing.T) {
	for _, env := range []map[string]string{nil, {"NODE_POOL": "pool-b", "CP_LABEL": "example.com/cp", "CPU_LIMIT": "2", "GRACE_SECONDS": "30"}} {
		out, res := packageTo(t, placeholderValuesDir, PackageOptions{Load: Options{SetEnv: env}})
		var csv struct {
			Spec struct {
				Install struct {
					Spec struct {
						Deployments []struct {
							Spec appsv1.DeploymentSpec `json:"spec"`
						} `json:"deployments"`
					} `json:"spec"`
				} `json:"install"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(readFile(t, filepath.Join(out, "bundle", "pvdemo", "manifests", "pvdemo.clusterserviceversion.yaml")), &csv); err != nil {
			t.Fatal(err)
		}
		pod := csv.Spec.Install.Spec.Deployments[0].Spec.Template.Spec
		label, pool, cpu, grace := "node-role.kubernetes.io/control-plane", "${NODE_POOL}", "500m", int64(10)
		if env != nil {
			label, pool, cpu, grace = env["CP_LABEL"], env["NODE_POOL"], env["CPU_LIMIT"], 30
		}
		if got := affinityKey(t, pod); got != label || pod.Tolerations[0].Key != label || pod.NodeSelector["example.com/pool"] != pool {
			t.Errorf("env %v: affinity key %q, tolerations %+v, nodeSelector %v: want %s and %s", env, got, pod.Tolerations, pod.NodeSelector, label, pool)
		}
		if got := pod.Containers[0].Resources.Limits.Cpu().String(); got != cpu || *pod.TerminationGracePeriodSeconds != grace {
			t.Errorf("env %v: cpu limit %s, terminationGracePeriodSeconds %d: want %s and %d", env, got, *pod.TerminationGracePeriodSeconds, cpu, grace)
		}
		warned := slices.ContainsFunc(res.Warnings, func(w string) bool {
			return strings.Contains(w, "the bundle keeps the placeholders NODE_POOL, ") && strings.Contains(w, "--set-env")
		})
		if warned != (env == nil) {
			t.Errorf("env %v: warnings %q, want one naming NODE_POOL only without --set-env", env, res.Warnings)
		}
	}
}

// A security context that opctl makes restricted fills its placeholders
// too, before opctl's additions are merged in.
func TestPlaceholdersInHardenedContext(t *testing.T) {
	dir := copyProject(t, placeholderValuesDir)
	replaceIn("config/manager/manager.yaml", "          allowPrivilegeEscalation: false\n",
		"          seccompProfile:\n            type: Localhost\n            localhostProfile: ${PROFILE:=profiles/manager.json}\n")(t, dir)
	out, _ := packageTo(t, dir, PackageOptions{})
	chart := filepath.Join(out, "charts", "pvdemo")
	for _, profile := range []string{"", "profiles/other.json"} {
		v := map[string]any{"NODE_POOL": "pool-a"}
		want := "profiles/manager.json"
		if profile != "" {
			v["PROFILE"], want = profile, profile
		}
		sc := renderManager(t, chart, map[string]any{"placeholders": v}).Containers[0].SecurityContext
		if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.LocalhostProfile == nil || *sc.SeccompProfile.LocalhostProfile != want ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("PROFILE %q: security context %+v, want the profile %s and allowPrivilegeEscalation false", profile, sc, want)
		}
	}
}

// placeheldValues lists a value's placeholders in one order, however its
// maps are walked: the docs that name them are output.
func TestPlaceheldValuesOrder(t *testing.T) {
	m := map[string]any{}
	var want []string
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m[k] = "${" + strings.ToUpper(k) + "}"
		want = append(want, "${"+strings.ToUpper(k)+"}")
	}
	for range 20 {
		got := placeheldValues([]value{{Key: "nodeSelector", Val: m}}, nil)[".Values.nodeSelector"]
		if !slices.Equal(got, want) {
			t.Fatalf("uses %q, want %q", got, want)
		}
	}
}

// A placeholder line (${VAR/#prefix/replacement} that expands to a whole
// "key: value" line, as in the ServiceAccount's annotations of the
// fixture) is no key holding "${" in the chart: the annotation is there
// when placeholders.IAM_ROLE is set, expanded as envsubst would, and
// absent when it is not.
func TestPlaceholderLines(t *testing.T) {
	out, _ := packageTo(t, placeholderValuesDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "pvdemo")
	const arn = "arn:aws:iam::123456789012:role/manager"
	for _, tc := range []struct {
		role string
		want map[string]string
	}{
		{"", nil},
		{arn, map[string]string{"eks.amazonaws.com/role-arn": arn}},
	} {
		phs := map[string]any{"NODE_POOL": "pool-a"}
		if tc.role != "" {
			phs["IAM_ROLE"] = tc.role
		}
		rendered := render(t, dir, "ns", map[string]any{"placeholders": phs})
		for name, text := range rendered {
			if strings.Contains(text, "${") && !strings.Contains(name, "/crds/") {
				t.Errorf("IAM_ROLE=%q: %s renders a placeholder:\n%s", tc.role, name, text)
			}
		}
		var sa corev1.ServiceAccount
		renderedObject(t, rendered, "ServiceAccount", "controller-manager", &sa)
		got := sa.Annotations
		if tc.want == nil && len(got) != 0 {
			t.Errorf("IAM_ROLE unset: annotations %v, want none", got)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("IAM_ROLE=%q: annotation %s = %q, want %q (all: %v)", tc.role, k, got[k], v, got)
			}
		}
	}
}

// A value that expands to no "key: value" line fails the render, naming
// the value and the line.
func TestPlaceholderLineBadValue(t *testing.T) {
	out, _ := packageTo(t, placeholderValuesDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "pvdemo")
	_, err := renderErr(dir, "ns", map[string]any{"placeholders": map[string]any{"NODE_POOL": "pool-a", "IAM_ROLE": "not-an-arn"}})
	if err == nil || !strings.Contains(err.Error(), "placeholders.IAM_ROLE") || !strings.Contains(err.Error(), "not one") {
		t.Errorf("IAM_ROLE=not-an-arn: %v, want a failure naming placeholders.IAM_ROLE", err)
	}
}

// In the bundle, --set-env expands a placeholder line as envsubst would,
// and an unset variable leaves no line; the scan lists the variable as
// optional, with the line as its use.
func TestSubstLineExpand(t *testing.T) {
	l, ok := parseSubstLine("${ROLE/#arn/eks.amazonaws.com/role-arn", "arn}")
	if !ok {
		t.Fatal("the placeholder line does not parse")
	}
	tests := []struct {
		env  map[string]string
		want map[string]any
	}{
		{nil, map[string]any{}},
		{map[string]string{"ROLE": "arn:aws:iam::1:role/x"}, map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"}},
	}
	for _, tt := range tests {
		obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{l.Text[:strings.Index(l.Text, ": ")]: "arn}"}}}
		changed, err := expandSubstLines(obj, tt.env)
		if err != nil || !changed {
			t.Fatalf("env %v: changed %v, %v", tt.env, changed, err)
		}
		got := obj["metadata"].(map[string]any)["annotations"]
		if b, w := mustJSON(t, got), mustJSON(t, tt.want); b != w {
			t.Errorf("env %v: annotations %s, want %s", tt.env, b, w)
		}
	}
	// A value that makes no "key: value" line is an error naming it.
	obj := map[string]any{"a": map[string]any{"${ROLE//x/y}": nil}}
	if _, err := expandSubstLines(obj, map[string]string{"ROLE": "- x"}); err == nil || !strings.Contains(err.Error(), "--set-env ROLE") {
		t.Errorf("a line expanding to a list item: %v, want an error naming --set-env ROLE", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A key that holds a placeholder in a form opctl cannot fill is left out
// with a warning naming the object and the key; a placeholder line stays
// for the chart to render.
func TestDropPlaceholderKeys(t *testing.T) {
	o := &unstructured.Unstructured{Object: map[string]any{"kind": "Service", "metadata": map[string]any{"name": "svc", "annotations": map[string]any{
		"${ANN}":            "x",
		"${ROLE/#arn/a/b":   "arn}",
		"example.com/plain": "y",
	}}}}
	p := &Project{}
	p.dropPlaceholderKeys([]*unstructured.Unstructured{o})
	got := o.GetAnnotations()
	if _, ok := got["${ANN}"]; ok || got["${ROLE/#arn/a/b"] != "arn}" || got["example.com/plain"] != "y" {
		t.Errorf("annotations %v: want ${ANN} dropped, the line and the plain one kept", got)
	}
	if len(p.warnings) != 1 || !strings.Contains(p.warnings[0], "Service svc") || !strings.Contains(p.warnings[0], `"${ANN}"`) {
		t.Errorf("warnings %q: want one naming Service svc and the key", p.warnings)
	}
}

func TestPlaceholderDefault(t *testing.T) {
	for in, want := range map[string]string{`""`: "", `"a b"`: "a b", `'x'`: "x", `plain`: "plain", `"`: `"`, `"a'`: `"a'`} {
		if got := placeholderDefault(in); got != want {
			t.Errorf("placeholderDefault(%q) = %q, want %q", in, got, want)
		}
	}
}
