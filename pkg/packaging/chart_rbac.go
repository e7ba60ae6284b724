package packaging

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// rulesYAML renders rules as a YAML list indented by indent spaces; no
// rules give a flow list to follow the key on its line.
func rulesYAML(rules []rbacv1.PolicyRule, indent int) (string, error) {
	if len(rules) == 0 {
		return emptyRules, nil
	}
	b, err := yaml.Marshal(rules)
	if err != nil {
		return "", err
	}
	pad := strings.Repeat(" ", indent)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := range lines {
		lines[i] = pad + lines[i]
	}
	return strings.Join(lines, "\n"), nil
}

// emptyRules marks an empty rules list; rbacTemplate moves it up to its
// key ("rules: []").
const emptyRules = "OPCTLEMPTYRULES"

// rbacTemplate renders the manager's permissions. With rbac.scope
// namespace, every namespaceable rule becomes a Role and RoleBinding in each
// watched namespace (the release namespace by default) and the rest a
// minimal ClusterRole; with rbac.scope cluster, one ClusterRole holds all.
// Their names are the chart's child name base (and base-cluster).
func rbacTemplate(chart, base string, g Grant) (string, error) {
	ns, err := rulesYAML(g.Namespaced, 0)
	if err != nil {
		return "", err
	}
	cl, err := rulesYAML(g.Cluster, 0)
	if err != nil {
		return "", err
	}
	all, err := rulesYAML(append(append([]rbacv1.PolicyRule{}, g.Namespaced...), g.Cluster...), 0)
	if err != nil {
		return "", err
	}
	r := strings.NewReplacer("CHART", chart, "BASE", base)
	var b strings.Builder
	b.WriteString(r.Replace(`{{- if .Values.rbac.create }}
{{- if eq .Values.rbac.scope "namespace" }}
{{- range $ns := splitList "," (include "CHART.watchNamespaces" $) }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "CHART.child" (list $ "BASE") }}
  namespace: {{ $ns }}
  labels:
    {{- include "CHART.labels" $ | nindent 4 }}
rules:
`))
	b.WriteString(ns)
	b.WriteString(r.Replace(`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "CHART.child" (list $ "BASE") }}
  namespace: {{ $ns }}
  labels:
    {{- include "CHART.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "CHART.child" (list $ "BASE") }}
subjects:
- kind: ServiceAccount
  name: {{ include "CHART.serviceAccountName" $ }}
  namespace: {{ $.Release.Namespace }}
{{- end }}
`))
	if len(g.Cluster) > 0 {
		b.WriteString(r.Replace(clusterRoleTemplate(base + "-cluster")))
		b.WriteString(cl)
		b.WriteString(r.Replace(clusterBindingTemplate(base + "-cluster")))
	}
	b.WriteString("{{- else }}\n")
	b.WriteString(r.Replace(clusterRoleTemplate(base)))
	b.WriteString(all)
	b.WriteString(r.Replace(clusterBindingTemplate(base)))
	b.WriteString("{{- end }}\n{{- end }}\n")
	return strings.ReplaceAll(b.String(), "rules:\n"+emptyRules, "rules: []"), nil
}

func clusterRoleTemplate(suffix string) string {
	return fmt.Sprintf(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "CHART.child" (list . (printf "%%s-%s" .Release.Namespace)) }}
  labels:
    {{- include "CHART.labels" . | nindent 4 }}
rules:
`, suffix)
}

func clusterBindingTemplate(suffix string) string {
	return fmt.Sprintf(`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "CHART.child" (list . (printf "%%s-%[1]s" .Release.Namespace)) }}
  labels:
    {{- include "CHART.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "CHART.child" (list . (printf "%%s-%[1]s" .Release.Namespace)) }}
subjects:
- kind: ServiceAccount
  name: {{ include "CHART.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
`, suffix)
}

// managerRBACBase is the child name of the manager's generated RBAC:
// "manager", unless the chart keeps an RBAC object of the project's by that
// name (a Role beside the ClusterRole of one name, as operator-sdk's go/v3
// projects have), then "manager-rules", and so on.
func (p *Project) managerRBACBase(mgr Grant) string {
	taken := map[string]bool{}
	for _, o := range slices.Concat(p.Objects, p.Optional) {
		if p.foldedIntoGrant(o, mgr) {
			continue // rendered as the manager's RBAC itself
		}
		if slices.Contains(rbacKinds, o.GetKind()) {
			taken[strings.TrimPrefix(o.GetName(), p.NamePrefix)] = true
		}
	}
	base := "manager"
	for taken[base] || taken[base+"-cluster"] {
		base += "-rules"
	}
	return base
}
