package packaging

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
	if want := []string{"CPU_LIMIT", "CP_LABEL", "LOG_LEVEL", "NODE_POOL", "PRIORITY_CLASS"}; !slices.Equal(names, want) {
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
