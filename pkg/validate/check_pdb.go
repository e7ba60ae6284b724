package validate

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// DisruptionBudget (OPC-C006) wants a PodDisruptionBudget over replicated workloads.
var DisruptionBudget = register(Check{ID: "OPC-C006", Severity: SeverityWarning, Relayed: false,
	Rationale: "Workloads with more than one replica need a PodDisruptionBudget so voluntary disruptions keep them available.",
	Hint:      "Add a PodDisruptionBudget that selects the pods."}, eachRender(checkDisruptionBudget))

func checkDisruptionBudget(c *Check, r *Report, rd *chartRender) {
	for _, w := range rd.workloads {
		if w.replicas > 1 && !coveredByPDB(rd.pdbs, w.obj) {
			r.add(c, fmt.Sprintf("%d replicas and no PodDisruptionBudget selects them", w.replicas), w.template, w.id)
		}
	}
}

// coveredByPDB reports whether a PDB in the same namespace selects the
// workload's pods.
func coveredByPDB(pdbs []policyv1.PodDisruptionBudget, o *unstructured.Unstructured) bool {
	podLabels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
	for _, p := range pdbs {
		if p.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}
