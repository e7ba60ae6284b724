package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Workload is an operator's own Deployment or StatefulSet: its replicas
// and the requests and limits of one pod.
type Workload struct {
	Name     string
	Replicas int64
	Requests corev1.ResourceList
	Limits   corev1.ResourceList
	// UnlimitedRequests are, per resource, the largest request of a
	// container that sets no limit for it: the LimitRange's default limit
	// must admit it.
	UnlimitedRequests corev1.ResourceList
}

// Operand is what one custom resource of a CRD runs, from the CRD's
// platform-as-code annotations and the ConfigMap they name.
type Operand struct {
	// CRD is <plural>.<group>.
	CRD string
	// Instances is how many custom resources the quota allows.
	Instances int64
	// Replicas are the pods of one instance.
	Replicas int64
	// Requests and Limits are per pod; Storage is one volume, of which
	// each pod claims PVCsPerReplica (pkg/pac has the units).
	Requests       corev1.ResourceList
	Limits         corev1.ResourceList
	Storage        *resource.Quantity
	PVCsPerReplica int64
}

// Input is everything a namespace's quota is computed from.
type Input struct {
	Workloads       []Workload
	Operands        []Operand
	HeadroomPercent int64
	// Overrides replace computed figures (spec.quota.hard).
	Overrides corev1.ResourceList
	// Defaults (the profile's default quota) are added to the computed
	// figures, or stand alone where none is computed. Objects are what
	// the platform puts in the namespace (the controller, the releases,
	// the cluster), by count resource: added to a default object count,
	// so the tenant's share is the default's.
	Defaults corev1.ResourceList
	Objects  map[corev1.ResourceName]int64
	// ContainerRequest and ContainerLimit are the profile's container
	// defaults; an operand's larger figures win.
	ContainerRequest, ContainerLimit corev1.ResourceList
	// NoNodePorts and NoLoadBalancers set services.nodeports and
	// services.loadbalancers to 0, a second layer under the guardrails.
	NoNodePorts, NoLoadBalancers bool
}

// Quota is a computed ResourceQuota and LimitRange.
type Quota struct {
	Hard corev1.ResourceList
	// Derivation explains each figure, one line per resource, sorted.
	Derivation []string
	// Default and DefaultRequest are the LimitRange's container defaults.
	Default, DefaultRequest corev1.ResourceList
}

// computed resource names and their per-pod source.
var computeResources = []struct {
	name   corev1.ResourceName
	source corev1.ResourceName
	limits bool
}{
	{corev1.ResourceRequestsCPU, corev1.ResourceCPU, false},
	{corev1.ResourceRequestsMemory, corev1.ResourceMemory, false},
	{corev1.ResourceLimitsCPU, corev1.ResourceCPU, true},
	{corev1.ResourceLimitsMemory, corev1.ResourceMemory, true},
}

// Compute sums the operator workloads and, per CRD, instances ×
// replicas × the per-pod figures, adds the headroom, and applies the
// overrides. It is a pure function of its input.
func Compute(in Input) Quota {
	q := Quota{Hard: corev1.ResourceList{}, Default: corev1.ResourceList{}, DefaultRequest: corev1.ResourceList{}}
	explain := map[corev1.ResourceName]string{}
	for _, r := range computeResources {
		total := resource.Quantity{}
		var terms []string
		add := func(label string, n int64, per corev1.ResourceList) {
			v, ok := per[r.source]
			if !ok || n == 0 {
				return
			}
			part := v.DeepCopy()
			part.Mul(n)
			total.Add(part)
			terms = append(terms, fmt.Sprintf("%s %d×%s", label, n, v.String()))
		}
		for _, w := range in.Workloads {
			add(w.Name, w.Replicas, pick(w.Requests, w.Limits, r.limits))
		}
		for _, o := range in.Operands {
			add(o.CRD, o.Instances*o.Replicas, pick(o.Requests, o.Limits, r.limits))
		}
		if len(terms) == 0 {
			continue
		}
		final := withHeadroom(total, in.HeadroomPercent, r.source == corev1.ResourceMemory)
		q.Hard[r.name] = final
		explain[r.name] = fmt.Sprintf("%s = %s = %s, +%d%% headroom = %s", r.name, strings.Join(terms, " + "), total.String(), in.HeadroomPercent, final.String())
	}
	pods, pvcs := int64(0), int64(0)
	var podTerms, pvcTerms []string
	storage := resource.Quantity{}
	for _, w := range in.Workloads {
		pods += w.Replicas
		podTerms = append(podTerms, fmt.Sprintf("%s %d", w.Name, w.Replicas))
	}
	for _, o := range in.Operands {
		n := o.Instances * o.Replicas
		pods += n
		podTerms = append(podTerms, fmt.Sprintf("%s %d×%d", o.CRD, o.Instances, o.Replicas))
		q.Hard[corev1.ResourceName("count/"+o.CRD)] = *resource.NewQuantity(o.Instances, resource.DecimalSI)
		explain[corev1.ResourceName("count/"+o.CRD)] = fmt.Sprintf("count/%s = instances %d", o.CRD, o.Instances)
		if o.Storage != nil && n > 0 {
			claims := n * max(o.PVCsPerReplica, 1)
			pvcs += claims
			part := o.Storage.DeepCopy()
			part.Mul(claims)
			storage.Add(part)
			pvcTerms = append(pvcTerms, fmt.Sprintf("%s %d×%s", o.CRD, claims, o.Storage.String()))
		}
		mergeMax(q.Default, o.Limits)
		mergeMax(q.DefaultRequest, o.Requests)
	}
	if pods > 0 {
		q.Hard[corev1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
		explain[corev1.ResourcePods] = fmt.Sprintf("pods = %s = %d", strings.Join(podTerms, " + "), pods)
		// Where a default bounds every Pod object (finished ones too), the
		// running pods the operators need come on top of it.
		if _, ok := in.Defaults[countPods]; ok {
			q.Hard[countPods] = q.Hard[corev1.ResourcePods]
			explain[countPods] = fmt.Sprintf("%s = pods %d", countPods, pods)
		}
		// A figure no platform-as-code gives but a default bounds (ephemeral
		// storage): the operators' pods take the container default each.
		for _, r := range podDefaults {
			per, ok := pick(in.ContainerRequest, in.ContainerLimit, r.limits)[r.source]
			if _, computed := q.Hard[r.name]; computed || !ok {
				continue
			}
			if _, bounded := in.Defaults[r.name]; !bounded {
				continue
			}
			need := per.DeepCopy()
			need.Mul(pods)
			q.Hard[r.name] = need
			explain[r.name] = fmt.Sprintf("%s = pods %d × container default %s = %s", r.name, pods, per.String(), need.String())
		}
	}
	if pvcs > 0 {
		q.Hard[corev1.ResourcePersistentVolumeClaims] = *resource.NewQuantity(pvcs, resource.DecimalSI)
		q.Hard[corev1.ResourceRequestsStorage] = storage
		explain[corev1.ResourcePersistentVolumeClaims] = fmt.Sprintf("persistentvolumeclaims = %d", pvcs)
		explain[corev1.ResourceRequestsStorage] = fmt.Sprintf("requests.storage = %s = %s", strings.Join(pvcTerms, " + "), storage.String())
	}
	for name, d := range in.Defaults {
		total, line := d.DeepCopy(), fmt.Sprintf("%s = default %s", name, d.String())
		if cur, ok := q.Hard[name]; ok {
			total.Add(cur)
			line = fmt.Sprintf("%s, + default %s", explain[name], d.String())
		}
		if n := in.Objects[name]; n > 0 {
			total.Add(*resource.NewQuantity(n, resource.DecimalSI))
			line += fmt.Sprintf(" + %d the platform creates", n)
		}
		q.Hard[name] = total
		explain[name] = fmt.Sprintf("%s = %s", line, total.String())
	}
	mergeMax(q.Default, in.ContainerLimit)
	mergeMax(q.DefaultRequest, in.ContainerRequest)
	admitDefaults(q, in.Workloads)
	for name, none := range map[corev1.ResourceName]bool{corev1.ResourceServicesNodePorts: in.NoNodePorts, corev1.ResourceServicesLoadBalancers: in.NoLoadBalancers} {
		if none {
			q.Hard[name] = *resource.NewQuantity(0, resource.DecimalSI)
			explain[name] = fmt.Sprintf("%s = 0 (not allowed by the profile)", name)
		}
	}
	for name, v := range in.Overrides {
		q.Hard[name] = v.DeepCopy()
		explain[name] = fmt.Sprintf("%s = %s (spec.quota.hard)", name, v.String())
	}
	for _, line := range explain {
		q.Derivation = append(q.Derivation, line)
	}
	sort.Strings(q.Derivation)
	return q
}

// podDefaults are the figures the operators' pods need from the
// container defaults when no platform-as-code figure gives them.
var podDefaults = []struct {
	name, source corev1.ResourceName
	limits       bool
}{
	{corev1.ResourceRequestsEphemeralStorage, corev1.ResourceEphemeralStorage, false},
	{corev1.ResourceLimitsEphemeralStorage, corev1.ResourceEphemeralStorage, true},
}

// countPods bounds every Pod object of a namespace, finished or not;
// "pods" counts only those not yet finished.
const countPods corev1.ResourceName = "count/pods"

// admitDefaults raises the LimitRange's default limits where they would
// refuse what they apply to: below the default request (the API server
// refuses such a LimitRange), or below the request of an operator's
// container that sets no limit (its pods would be refused).
func admitDefaults(q Quota, workloads []Workload) {
	raise := func(min corev1.ResourceList) {
		for k, v := range min {
			if cur, ok := q.Default[k]; ok && v.Cmp(cur) > 0 {
				q.Default[k] = v.DeepCopy()
			}
		}
	}
	raise(q.DefaultRequest)
	for _, w := range workloads {
		raise(w.UnlimitedRequests)
	}
}

func pick(requests, limits corev1.ResourceList, useLimits bool) corev1.ResourceList {
	if useLimits {
		return limits
	}
	return requests
}

// withHeadroom adds percent and rounds up: CPU to millicores, memory to
// mebibytes.
func withHeadroom(q resource.Quantity, percent int64, memory bool) resource.Quantity {
	if memory {
		const mi = 1 << 20
		v := (q.Value()*(100+percent) + 99) / 100
		return *resource.NewQuantity((v+mi-1)/mi*mi, resource.BinarySI)
	}
	m := (q.MilliValue()*(100+percent) + 99) / 100
	return *resource.NewMilliQuantity(m, resource.DecimalSI)
}

func mergeMax(dst, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v.Cmp(cur) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
