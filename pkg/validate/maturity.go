package validate

import (
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"opctl.dev/opctl/pkg/pac"
	"opctl.dev/opctl/pkg/packaging/contract"
)

// Guideline outcomes.
const (
	Pass          = "pass"
	Fail          = "fail"
	NotApplicable = "not-applicable"
)

// Maturity dimensions of the operator maturity model.
const (
	DimUsability    = "application developer usability"
	DimInterop      = "multi-operator interoperability"
	DimMultiTenancy = "multi-tenant guarantees"
	DimPortability  = "distribution and cloud independence"
)

// Guideline is one maturity guideline and how the bundle fares.
type Guideline struct {
	Dimension string   `json:"dimension"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`
	Evidence  []string `json:"evidence,omitempty"`
}

// maturityOf grades the maturity guidelines that a bundle can show.
// Documentation and runtime behaviour are unknown, never passes; the Helm
// guidelines are unknown for a bundle alone.
func maturityOf(b *manifests.Bundle, files map[string]string, structural bool) []Guideline {
	csvFile := files["ClusterServiceVersion/"+b.CSV.Name]
	spec := map[string]string{}
	var printerColumns, validations, pacs []string
	annotations := map[string]bool{}
	for _, crd := range b.V1CRDs {
		file := files["CustomResourceDefinition/"+crd.Name]
		for _, k := range sortedKeys(crd.Annotations) {
			if strings.HasPrefix(k, pac.Prefix) {
				annotations[strings.TrimPrefix(k, pac.Prefix)] = true
				pacs = append(pacs, file+":metadata.annotations."+k)
			}
		}
		for _, v := range crd.Spec.Versions {
			if len(v.AdditionalPrinterColumns) > 0 {
				printerColumns = append(printerColumns, file+":"+v.Name+".additionalPrinterColumns")
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			s, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				continue
			}
			for _, name := range sortedKeys(s.Properties) {
				spec[name] = file + ":" + v.Name + ".spec." + name
				if hasValidation(s.Properties[name]) {
					validations = append(validations, spec[name])
				}
			}
		}
	}
	specField := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if e, ok := spec[n]; ok {
				out = append(out, e)
			}
		}
		return out
	}
	g := func(dim, name, status string, evidence ...string) Guideline {
		return Guideline{Dimension: dim, Name: name, Status: status, Evidence: evidence}
	}
	passIf := func(dim, name string, evidence []string, otherwise string, why string) Guideline {
		if len(evidence) > 0 {
			return g(dim, name, Pass, evidence[0])
		}
		return g(dim, name, otherwise, why)
	}
	imperative := specField("action", "command", "operation", "trigger", "execute", "run")
	declarative := g(DimUsability, "declarative custom resource API", Pass, "no imperative spec fields (action, command, operation, trigger)")
	if len(imperative) > 0 {
		declarative = g(DimUsability, "declarative custom resource API", Fail, imperative...)
	}
	openAPI := g(DimUsability, "CRDs compliant with Kube OpenAPI (structural, described)", Pass, "no OPC-B001 findings")
	if !structural {
		openAPI = g(DimUsability, "CRDs compliant with Kube OpenAPI (structural, described)", Fail, "see the OPC-B001 findings")
	}
	ownNamespace := slices.ContainsFunc(b.CSV.Spec.InstallModes, func(m operatorsv1alpha1.InstallMode) bool {
		return m.Supported && (m.Type == operatorsv1alpha1.InstallModeTypeOwnNamespace || m.Type == operatorsv1alpha1.InstallModeTypeSingleNamespace)
	})
	watch := ""
	for _, d := range b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "WATCH_NAMESPACE" {
					watch = csvFile + ":spec.install.spec.deployments[" + d.Name + "].env.WATCH_NAMESPACE"
				}
			}
		}
	}
	namespaceAware := judgeNamespaceAware(b.CSV.Annotations, csvFile, ownNamespace, watch)
	metrics := Fail
	var metricsEvidence []string
	for _, o := range b.Objects {
		if o.GetKind() == "ServiceMonitor" || (o.GetKind() == "Service" && strings.Contains(o.GetName(), "metrics")) {
			metrics = Pass
			metricsEvidence = append(metricsEvidence, files[o.GetKind()+"/"+o.GetName()])
		}
	}
	pacSC := pacEvidence(annotations, pacs, pac.SecurityContext)
	pacSA := pacEvidence(annotations, pacs, pac.ServiceAccount)
	return []Guideline{
		declarative,
		openAPI,
		passIf(DimUsability, "underlying resources configured through the custom resource spec, a ConfigMap or annotations", specField("config", "configuration", "configMap", "settings"), Unknown, "no config field in spec"),
		passIf(DimUsability, "PodDisruptionBudget for custom resources", append(pacEvidence(annotations, pacs, pac.PDBMinAvailable), pacEvidence(annotations, pacs, pac.PDBMaxUnavailable)...), Fail, "no platform-as-code/pdb-* annotation"),
		passIf(DimUsability, "platform-as-code annotations on CRDs", pacs, Fail, "no platform-as-code/* annotation on any CRD"),
		passIf(DimUsability, "kubectl as the primary interaction (printer columns)", printerColumns, Fail, "no additionalPrinterColumns"),
		passIf(DimUsability, "ServiceAccount needs documented", pacSA, Unknown, "documentation outside the manifests cannot be judged"),
		g(DimUsability, "naming conventions and labels documented", Unknown, "documentation outside the manifests cannot be judged"),
		passIf(DimInterop, "resource requests and limits for custom resources", append(pacEvidence(annotations, pacs, pac.CPURequests), specField("resources")...), Fail, "no resources field or platform-as-code/cpu-requests annotation"),
		passIf(DimInterop, "node affinity rules", specField("nodeSelector", "affinity"), Fail, "no nodeSelector or affinity in spec"),
		passIf(DimInterop, "pod affinity rules", specField("affinity", "podAffinity"), Unknown, "no affinity in spec; the operator may set it itself"),
		passIf(DimInterop, "pod anti-affinity rules", specField("affinity", "podAntiAffinity"), Unknown, "no affinity in spec; the operator may set it itself"),
		passIf(DimInterop, "taint tolerations", specField("tolerations"), Fail, "no tolerations in spec"),
		g(DimInterop, "ownerReferences on owned resources", Unknown, "set at run time; test it (operatorkit does)"),
		g(DimInterop, "metrics collection strategy", metrics, append(metricsEvidence, "no metrics Service or ServiceMonitor")[0]),
		passIf(DimMultiTenancy, "securityContext for custom resource pods", append(pacSC, specField("securityContext", "podSecurityContext")...), Unknown, "no securityContext field or annotation"),
		passIf(DimMultiTenancy, "ServiceAccount needs of custom resource pods evaluated", pacSA, Unknown, "no platform-as-code/serviceaccount annotation"),
		namespaceAware,
		passIf(DimMultiTenancy, "namespace use documented", stringsIf(b.CSV.Annotations["operatorframework.io/suggested-namespace"] != "", csvFile+":metadata.annotations.operatorframework.io/suggested-namespace"), Unknown, "no suggested-namespace annotation"),
		g(DimPortability, "packaged as a Helm chart", Unknown, "validate the chart or the project to judge"),
		g(DimPortability, "CRDs registered as YAML in the Helm chart", Unknown, "validate the chart or the project to judge"),
		g(DimPortability, "crd-install Helm hook", NotApplicable, "Helm 3 ignores the crd-install hook; CRDs are templated or in crds/"),
		passIf(DimPortability, "spec validation rules in the CRD schema", validations, Fail, "no enum, pattern, minimum, maximum or required in spec"),
		g(DimPortability, "operator configurables through Helm values or a ConfigMap", Unknown, "validate the chart or the project to judge"),
	}
}

// judgeNamespaceAware grades "controllers are namespace aware": from what
// opctl package found in the manager's code when the CSV says it
// (contract.WatchNamespace), else from a WATCH_NAMESPACE variable beside
// an OwnNamespace or SingleNamespace install mode.
func judgeNamespaceAware(ann map[string]string, csvFile string, ownNamespace bool, watch string) Guideline {
	const name = "controllers are namespace aware"
	g := Guideline{Dimension: DimMultiTenancy, Name: name}
	v, detected := ann[contract.WatchNamespace]
	evidence := csvFile + ":metadata.annotations." + contract.WatchNamespace + ": " + v
	switch {
	case detected && v == contract.WatchNone:
		g.Status, g.Evidence = Fail, []string{evidence + " (opctl package found no watch-namespace setting in the manager's code: it watches every namespace)"}
	case detected && v == contract.WatchUnknown:
		g.Status, g.Evidence = Unknown, []string{evidence + " (opctl package found no code of the manager to read)"}
	case detected && ownNamespace:
		g.Status, g.Evidence = Pass, []string{evidence}
	case detected:
		g.Status, g.Evidence = Fail, []string{evidence + ", but no OwnNamespace or SingleNamespace install mode"}
	case ownNamespace && watch != "":
		g.Status, g.Evidence = Pass, []string{watch}
	default:
		g.Status, g.Evidence = Fail, []string{"no WATCH_NAMESPACE with an OwnNamespace or SingleNamespace install mode"}
	}
	return g
}

// pacEvidence names the annotation of key as evidence; the keys the
// tenancy controller does not enforce say so.
func pacEvidence(have map[string]bool, all []string, key string) []string {
	if !have[key] {
		return nil
	}
	for _, e := range all {
		if strings.HasSuffix(e, pac.Prefix+key) {
			if slices.Contains(pac.Informational, key) {
				e += " (informational: shipped, not enforced by the tenancy controller)"
			}
			return []string{e}
		}
	}
	return nil
}

func stringsIf(ok bool, s string) []string {
	if ok {
		return []string{s}
	}
	return nil
}

func hasValidation(p apiextensionsv1.JSONSchemaProps) bool {
	return len(p.Enum) > 0 || p.Pattern != "" || p.Minimum != nil || p.Maximum != nil || len(p.Required) > 0 || p.MaxLength != nil
}

// judgeChart settles the Helm guidelines of a bundle's maturity once the
// operator's chart is known: it exists, carries the CRDs as YAML, and has
// values.
func judgeChart(gs []Guideline, chartDir string, crdsInChart bool) {
	for i := range gs {
		g := &gs[i]
		if g.Dimension != DimPortability || g.Status != Unknown {
			continue
		}
		switch g.Name {
		case "packaged as a Helm chart", "operator configurables through Helm values or a ConfigMap":
			g.Status, g.Evidence = Pass, []string{chartDir}
		case "CRDs registered as YAML in the Helm chart":
			g.Status, g.Evidence = Fail, []string{"no CRD in the chart"}
			if crdsInChart {
				g.Status, g.Evidence = Pass, []string{chartDir + "/templates/crds"}
			}
		}
	}
}
