package quota

import (
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"opctl.dev/opctl/pkg/pac"
)

// Analysis is what the controller needs from a rendered chart.
type Analysis struct {
	CRDs      []*apiextensionsv1.CustomResourceDefinition
	Workloads []Workload
	// Operands per CRD, with Instances left zero.
	Operands []Operand
	// Others are the rendered objects that are neither CRDs nor needed
	// here, kept for completeness.
	Objects int
	// Counts are the namespaced objects by count resource (countedKinds),
	// for the default object-count quota.
	Counts map[corev1.ResourceName]int64
	// Release is the chart Helm installs (charts only): without CRDs.
	Release *chart.Chart
}

// Analyze reads CRDs, workloads and platform-as-code figures.
func Analyze(objs []*unstructured.Unstructured) (*Analysis, error) {
	a := &Analysis{Objects: len(objs), Counts: map[corev1.ResourceName]int64{}}
	configMaps := map[string]map[string]string{}
	for _, u := range objs {
		ObjectCounts(a.Counts, u.GroupVersionKind().GroupKind(), 1)
		switch u.GetKind() {
		case "CustomResourceDefinition":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
				return nil, fmt.Errorf("CRD %s: %w", u.GetName(), err)
			}
			a.CRDs = append(a.CRDs, crd)
		case "ConfigMap":
			data, _, _ := unstructured.NestedStringMap(u.Object, "data")
			configMaps[u.GetName()] = data
		case "Deployment", "StatefulSet":
			w, err := workload(u)
			if err != nil {
				return nil, err
			}
			a.Workloads = append(a.Workloads, w)
		}
	}
	sort.Slice(a.CRDs, func(i, j int) bool { return a.CRDs[i].Name < a.CRDs[j].Name })
	sort.Slice(a.Workloads, func(i, j int) bool { return a.Workloads[i].Name < a.Workloads[j].Name })
	for _, crd := range a.CRDs {
		op, ok, err := operand(crd, configMaps)
		if err != nil {
			return nil, err
		}
		if ok {
			a.Operands = append(a.Operands, op)
		}
	}
	return a, nil
}

// quantityKeys hold quantities in workloads: resources, pod overhead,
// an emptyDir's size limit.
var quantityKeys = map[string]bool{"requests": true, "limits": true, "overhead": true}

// BoundedQuantities refuses a workload whose quantity text would stall
// the decoder (apimachinery takes minutes on "1e-99999999"): a tenant's
// chart must not hold a reconcile worker.
func BoundedQuantities(v any, parent string) error {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && (quantityKeys[parent] || k == "sizeLimit") {
				if err := pac.BoundedQuantity(s); err != nil {
					return fmt.Errorf("%s %q: %w", k, s, err)
				}
				continue
			}
			if err := BoundedQuantities(e, k); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := BoundedQuantities(e, parent); err != nil {
				return err
			}
		}
	}
	return nil
}

func workload(u *unstructured.Unstructured) (Workload, error) {
	if err := BoundedQuantities(u.Object, ""); err != nil {
		return Workload{}, fmt.Errorf("reading %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	var (
		replicas *int32
		spec     corev1.PodSpec
	)
	switch u.GetKind() {
	case "Deployment":
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			return Workload{}, fmt.Errorf("reading Deployment %s: %w", u.GetName(), err)
		}
		replicas, spec = d.Spec.Replicas, d.Spec.Template.Spec
	default:
		s := &appsv1.StatefulSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
			return Workload{}, fmt.Errorf("reading StatefulSet %s: %w", u.GetName(), err)
		}
		replicas, spec = s.Spec.Replicas, s.Spec.Template.Spec
	}
	w := Workload{Name: u.GetKind() + "/" + u.GetName(), Replicas: 1, Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	if replicas != nil {
		w.Replicas = int64(*replicas)
	}
	for _, c := range spec.Containers {
		addAll(w.Requests, c.Resources.Requests)
		addAll(w.Limits, c.Resources.Limits)
		unlimitedRequests(&w, c.Resources)
	}
	for _, c := range spec.InitContainers {
		unlimitedRequests(&w, c.Resources)
	}
	return w, nil
}

// unlimitedRequests notes in w the requests of a container that sets no
// limit for them: a LimitRange's default limit applies to it and must not
// be below them, or the API server refuses its pods.
func unlimitedRequests(w *Workload, r corev1.ResourceRequirements) {
	for k, v := range r.Requests {
		if _, limited := r.Limits[k]; !limited {
			if w.UnlimitedRequests == nil {
				w.UnlimitedRequests = corev1.ResourceList{}
			}
			mergeMax(w.UnlimitedRequests, corev1.ResourceList{k: v})
		}
	}
}

func addAll(dst, src corev1.ResourceList) {
	for k, v := range src {
		cur := dst[k]
		cur.Add(v)
		dst[k] = cur
	}
}

// operand reads a CRD's platform-as-code figures through the contract;
// ok is false when the CRD carries none.
func operand(crd *apiextensionsv1.CustomResourceDefinition, configMaps map[string]map[string]string) (Operand, bool, error) {
	f, ok, err := pac.Read(crd.Name, crd.Annotations, configMaps)
	if err != nil || !ok {
		return Operand{}, false, err
	}
	return Operand{CRD: crd.Name, Replicas: f.Replicas, Requests: f.Requests, Limits: f.Limits, Storage: f.Storage, PVCsPerReplica: f.PVCsPerReplica}, true, nil
}
