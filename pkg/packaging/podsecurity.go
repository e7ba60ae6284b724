package packaging

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"opctl.dev/opctl/pkg/packaging/contract"
	"opctl.dev/opctl/pkg/packaging/podsecurity"
)

// PodSecurity is how the pods a package ships fare against the Pod
// Security Standards, judged by the Pod Security admission evaluator,
// after opctl made the manager's pods meet restricted where it could.
type PodSecurity struct {
	// Level is the least strict level of the pod templates shipped:
	// privileged, baseline or restricted.
	Level string `json:"level"`
	// Reasons says, for each workload, why each stricter level refuses
	// its pods, in contract.PodSecurityReasons's format; "" at restricted.
	Reasons string `json:"reasons,omitempty"`
	// Changes are what opctl changed in the manager's pods, one per field.
	Changes []string `json:"changes,omitempty"`
}

// hardening is what opctl added to the manager's security contexts: the
// chart adds it unless podSecurity.restricted is false, so it keeps the
// project's own contexts (orig) to render without it.
type hardening struct {
	pod            map[string]any
	containers     map[string]map[string]any
	origPod        *corev1.PodSecurityContext
	origContainers map[string]*corev1.SecurityContext
}

// nonDefaultCapsAllowed are the capabilities restricted lets a container add.
var nonDefaultCapsAllowed = []corev1.Capability{"NET_BIND_SERVICE"}

// hardenManager makes the manager's pods meet Pod Security restricted
// where that changes nothing the operator relies on: seccompProfile
// RuntimeDefault on the pod, and on each container allowPrivilegeEscalation
// false, capabilities.drop ALL and runAsNonRoot true where something shows
// it runs as non-root (its runAsUser, or, for the manager's container, the
// Dockerfile's final USER). It changes nothing unless the result meets
// restricted: a pod that needs more (host namespaces, a privileged
// container, added capabilities, a root user) is kept as it is, and the
// warnings say what stops it. Each change is a warning.
func (p *Project) hardenManager(df *dockerfile) error {
	tmpl := &p.Manager.Spec.Template
	before, err := podsecurity.Evaluate(&tmpl.ObjectMeta, &tmpl.Spec)
	if err != nil {
		return err
	}
	if before.Meets(podsecurity.Restricted) {
		return nil
	}
	spec := tmpl.Spec.DeepCopy()
	h := &hardening{pod: map[string]any{}, containers: map[string]map[string]any{}, origContainers: map[string]*corev1.SecurityContext{}}
	h.origPod = tmpl.Spec.SecurityContext.DeepCopy()
	var changes, stops []string
	name := "manager Deployment " + p.Manager.Name
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	psc := spec.SecurityContext
	if psc.SeccompProfile == nil && !allContainers(spec, func(c *corev1.Container) bool {
		return c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil
	}) {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		h.pod["seccompProfile"] = map[string]any{"type": "RuntimeDefault"}
		changes = append(changes, fmt.Sprintf("%s: opctl set the pod's securityContext.seccompProfile to RuntimeDefault", name))
	}
	podUser := psc.RunAsUser
	manager := managerContainer(p.Manager).Name
	for _, list := range []*[]corev1.Container{&spec.InitContainers, &spec.Containers} {
		for i := range *list {
			c := &(*list)[i]
			h.origContainers[c.Name] = c.SecurityContext.DeepCopy()
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			sc := c.SecurityContext
			add := map[string]any{}
			if ptr.Deref(sc.Privileged, false) {
				stops = append(stops, "container "+c.Name+" is privileged")
				continue
			}
			if sc.Capabilities != nil && slices.ContainsFunc(sc.Capabilities.Add, func(c corev1.Capability) bool { return !slices.Contains(nonDefaultCapsAllowed, c) }) {
				stops = append(stops, fmt.Sprintf("container %s adds capabilities %v", c.Name, sc.Capabilities.Add))
				continue
			}
			if sc.AllowPrivilegeEscalation == nil {
				sc.AllowPrivilegeEscalation = ptr.To(false)
				add["allowPrivilegeEscalation"] = false
				changes = append(changes, fmt.Sprintf("%s: opctl set container %s's securityContext.allowPrivilegeEscalation to false", name, c.Name))
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				if sc.Capabilities == nil {
					sc.Capabilities = &corev1.Capabilities{}
				}
				sc.Capabilities.Drop = append(sc.Capabilities.Drop, "ALL")
				add["capabilities"] = jsonMap(sc.Capabilities)
				changes = append(changes, fmt.Sprintf("%s: opctl added ALL to container %s's securityContext.capabilities.drop", name, c.Name))
			}
			if sc.RunAsNonRoot == nil && !ptr.Deref(psc.RunAsNonRoot, false) {
				user := sc.RunAsUser
				if user == nil {
					user = podUser
				}
				switch uid, named, ok := df.nonRootUser(); {
				case psc.RunAsNonRoot != nil:
					// The pod says false: the project wants it so.
				case user != nil && *user > 0:
					sc.RunAsNonRoot = ptr.To(true)
					add["runAsNonRoot"] = true
					changes = append(changes, fmt.Sprintf("%s: opctl set container %s's securityContext.runAsNonRoot to true (it runs as user %d)", name, c.Name, *user))
				case user == nil && c.Name == manager && ok:
					sc.RunAsNonRoot = ptr.To(true)
					add["runAsNonRoot"] = true
					why := fmt.Sprintf("the Dockerfile's final stage runs as USER %s", df.User)
					if named {
						// The kubelet verifies runAsNonRoot only with a uid.
						sc.RunAsUser = ptr.To(uid)
						add["runAsUser"] = uid
						why += fmt.Sprintf(", uid %d, which opctl sets as runAsUser since the kubelet cannot verify a user name", uid)
					}
					changes = append(changes, fmt.Sprintf("%s: opctl set container %s's securityContext.runAsNonRoot to true (%s)", name, c.Name, why))
				case user != nil:
					stops = append(stops, fmt.Sprintf("container %s runs as user %d", c.Name, *user))
				default:
					src := "the Dockerfile's final stage sets no non-root USER"
					if c.Name != manager {
						src = "it is not the manager, whose Dockerfile opctl reads"
					} else if df == nil {
						src = "the project has no Dockerfile"
					}
					stops = append(stops, fmt.Sprintf("nothing shows container %s runs as non-root (no runAsUser, and %s)", c.Name, src))
				}
			}
			if len(add) > 0 {
				h.containers[c.Name] = add
			}
		}
	}
	after, err := podsecurity.Evaluate(&tmpl.ObjectMeta, spec)
	if err != nil {
		return err
	}
	if !after.Meets(podsecurity.Restricted) {
		why := after.Refusals[podsecurity.Restricted]
		if len(stops) > 0 {
			why = strings.Join(stops, "; ")
		}
		p.warnf("%s: its pods meet Pod Security %s, not restricted (%s), and opctl left them as they are, since they need what restricted forbids or nothing shows they can do without it: %s; a namespace enforcing restricted, as every tenant namespace does, refuses them", name, before.Level, before.Refusals[podsecurity.Restricted], why)
		return nil
	}
	tmpl.Spec = *spec
	p.hardening = h
	for _, c := range changes {
		p.warnf("%s so that its pods meet Pod Security restricted; the chart's podSecurity.restricted=false undoes it", c)
	}
	return p.rawSecurityContexts()
}

func allContainers(spec *corev1.PodSpec, f func(*corev1.Container) bool) bool {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if !f(&list[i]) {
				return false
			}
		}
	}
	return true
}

// rawSecurityContexts writes the manager's typed security contexts into
// its built form, which digest pinning reads back.
func (p *Project) rawSecurityContexts() error {
	spec := &p.Manager.Spec.Template.Spec
	set := func(v any, fields ...string) error {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		if err != nil {
			return err
		}
		return unstructured.SetNestedMap(p.managerRaw.Object, m, fields...)
	}
	if spec.SecurityContext != nil {
		if err := set(spec.SecurityContext, "spec", "template", "spec", "securityContext"); err != nil {
			return err
		}
	}
	for _, kind := range []string{"initContainers", "containers"} {
		raw, _, _ := unstructured.NestedSlice(p.managerRaw.Object, "spec", "template", "spec", kind)
		typed := spec.Containers
		if kind == "initContainers" {
			typed = spec.InitContainers
		}
		for i, rc := range raw {
			m, ok := rc.(map[string]any)
			if !ok || i >= len(typed) || typed[i].SecurityContext == nil {
				continue
			}
			sc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed[i].SecurityContext)
			if err != nil {
				return err
			}
			m["securityContext"] = sc
		}
		if len(raw) > 0 {
			if err := unstructured.SetNestedSlice(p.managerRaw.Object, raw, "spec", "template", "spec", kind); err != nil {
				return err
			}
		}
	}
	return nil
}

// podTemplatePaths are where workload kinds keep their pod template.
var podTemplatePaths = map[string][]string{
	"Deployment": {"spec", "template"}, "StatefulSet": {"spec", "template"}, "DaemonSet": {"spec", "template"},
	"ReplicaSet": {"spec", "template"}, "Job": {"spec", "template"}, "CronJob": {"spec", "jobTemplate", "spec", "template"},
}

// judgePodSecurity records the level of every pod template the package
// ships: the manager's and those of the other workloads.
func (p *Project) judgePodSecurity() error {
	type judged struct {
		id  string
		res podsecurity.Result
	}
	tmpl := p.Manager.Spec.Template
	res, err := podsecurity.Evaluate(&tmpl.ObjectMeta, &tmpl.Spec)
	if err != nil {
		return err
	}
	all := []judged{{"Deployment/" + p.Manager.Name, res}}
	for _, o := range p.Objects {
		path, ok := podTemplatePaths[o.GetKind()]
		if o.GetKind() == "Pod" {
			path, ok = []string{}, true
		}
		if !ok {
			continue
		}
		raw, found, _ := unstructured.NestedMap(o.Object, path...)
		if !found && len(path) > 0 {
			continue
		}
		if len(path) == 0 {
			raw = o.Object
		}
		var t corev1.PodTemplateSpec
		if b, err := json.Marshal(raw); err != nil || json.Unmarshal(b, &t) != nil {
			continue // the overlay's own business; the chart carries it as built
		}
		r, err := podsecurity.Evaluate(&t.ObjectMeta, &t.Spec)
		if err != nil {
			return err
		}
		id := o.GetKind() + "/" + o.GetName()
		all = append(all, judged{id, r})
		if !r.Meets(podsecurity.Restricted) {
			p.warnf("%s %s: its pods meet Pod Security %s, not restricted (%s): a namespace enforcing restricted, as every tenant namespace does, refuses them; opctl makes only the manager's pods restricted", o.GetKind(), o.GetName(), r.Level, r.Refusals[podsecurity.Restricted])
		}
	}
	ps := PodSecurity{Level: podsecurity.Restricted}
	var reasons []string
	for _, l := range []string{podsecurity.Baseline, podsecurity.Restricted} {
		for _, j := range all {
			if why, ok := j.res.Refusals[l]; ok {
				reasons = append(reasons, l+": "+j.id+": "+why)
			}
		}
	}
	for _, j := range all {
		if slices.Index(contract.Levels, j.res.Level) < slices.Index(contract.Levels, ps.Level) {
			ps.Level = j.res.Level
		}
	}
	ps.Reasons = strings.Join(reasons, "; ")
	p.PodSecurity = ps
	return nil
}

// summary says what the hardening adds, for the podSecurity value.
func (h *hardening) summary() string {
	var parts []string
	for _, k := range sortedKeys(h.pod) {
		parts = append(parts, "pod "+k)
	}
	for _, name := range sortedKeys(h.containers) {
		parts = append(parts, "container "+name+" "+strings.Join(sortedKeys(h.containers[name]), ", "))
	}
	return strings.Join(parts, "; ")
}
