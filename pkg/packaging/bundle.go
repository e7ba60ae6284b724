package packaging

import (
	"fmt"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// bundleKinds are the extra objects a registry+v1 bundle may carry.
var bundleKinds = []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap", "NetworkPolicy", "PodDisruptionBudget",
	"PriorityClass", "PrometheusRule", "Role", "RoleBinding", "Secret", "Service", "ServiceAccount", "ServiceMonitor"}

// chartOnlyKinds are carried by the chart and left out of the bundle, with
// a warning: OLM v0 refuses to install them.
var chartOnlyKinds = []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// Bundle renders the OLM registry+v1 bundle under bundle/<name>/.
func (p *Project) Bundle(opts BundleOptions) (Files, []string, error) {
	if len(opts.Channels) == 0 {
		opts.Channels = p.Config.Channels
		opts.DefaultChannel = firstNonEmpty(opts.DefaultChannel, p.Config.DefaultChannel)
	}
	if len(opts.Channels) == 0 {
		// operator-sdk's bundle flow: a default channel alone is the channel.
		opts.Channels = []string{firstNonEmpty(opts.DefaultChannel, "stable")}
	}
	if opts.DefaultChannel == "" {
		opts.DefaultChannel = opts.Channels[0]
	}
	if !slices.Contains(opts.Channels, opts.DefaultChannel) {
		return nil, nil, fmt.Errorf("--default-channel %q is not one of --channels %v", opts.DefaultChannel, opts.Channels)
	}
	a, err := p.analyze()
	if err != nil {
		return nil, nil, err
	}
	grants, pacs, warnings := a.grants, a.pacs, append(a.warnings[:len(a.warnings):len(a.warnings)], operatorHubGaps(p.Config, p.Config.Icon != "" || len(p.inputs.icons()) > 0)...)
	csv, err := p.CSV(opts, grants, pacs)
	if err != nil {
		return nil, nil, err
	}
	dir := bundleDir + "/" + p.Name + "/"
	files := Files{}
	csvMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(csv)
	if err != nil {
		return nil, nil, err
	}
	if err := put(files, dir+"manifests/"+p.Name+".clusterserviceversion.yaml", pruneServerFields(csvMap)); err != nil {
		return nil, nil, err
	}
	for _, crd := range p.CRDs {
		path := dir + "manifests/" + crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"
		if conv := crd.Spec.Conversion; conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || len(conv.Webhook.ClientConfig.CABundle) == 0 {
			files[path] = a.crdTexts[crd.Name]
			continue
		}
		c := p.crdWithPAC(crd, pacs)
		c.Spec.Conversion.Webhook.ClientConfig.CABundle = nil // OLM injects its own
		m, err := crdMap(c)
		if err != nil {
			return nil, nil, err
		}
		if err := put(files, path, m); err != nil {
			return nil, nil, err
		}
	}
	left, err := p.bundleObjects(files, dir, grants, pacs)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, left...)
	if p.Webhook != nil && p.Webhook.Certificates == CertsOperator {
		switches := "no env var or flag for it was found in the manager"
		if len(p.Webhook.SelfManaged) > 0 {
			switches = "look at " + strings.Join(p.Webhook.SelfManaged, ", ")
		}
		warnings = append(warnings, fmt.Sprintf("webhooks: the operator manages its own serving certificates; under OLM, which issues and injects them for the webhookdefinitions, it should step aside (%s)", switches))
	}
	left, err = p.fillBundle(files, dir)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, left...)
	channels := strings.Join(opts.Channels, ",")
	ann, err := bundleAnnotations(p.Name, channels, opts.DefaultChannel)
	if err != nil {
		return nil, nil, err
	}
	files[dir+"metadata/annotations.yaml"] = ann
	files[dir+"bundle.Dockerfile"] = bundleDockerfile(p.Name, channels, opts.DefaultChannel)
	return files, warnings, nil
}

// bundleObjects adds the overlay's extra objects, except what OLM creates
// itself from the CSV: the ServiceAccounts of grants and the RBAC that the
// CSV's permissions carry. Platform-as-code ConfigMaps are added.
func (p *Project) bundleObjects(files Files, dir string, grants []Grant, pacs []PlatformAsCode) ([]string, error) {
	var warnings []string
	inCSV := map[string]bool{}
	for _, sa := range p.workloadAccounts() {
		inCSV["ServiceAccount/"+sa] = true // OLM makes the accounts of the CSV's Deployments
	}
	for _, g := range grants {
		inCSV["ServiceAccount/"+g.ServiceAccount] = true
		for _, r := range g.Roles {
			inCSV["Role/"+r] = true
		}
		for _, r := range g.ClusterRoles {
			inCSV["ClusterRole/"+r] = true
		}
	}
	// OLM makes a declared APIService and its Service from the CSV.
	defs, apiWarnings := p.apiServiceDefinitions()
	warnings = append(warnings, apiWarnings...)
	apiBackends := map[string]bool{}
	for _, a := range p.apiServices() {
		if svc, d, _ := p.apiServiceBackend(a); d != nil && slices.ContainsFunc(defs, func(x operatorsv1alpha1.APIServiceDescription) bool { return x.DisplayName == a.GetName() }) {
			apiBackends["APIService/"+a.GetName()], apiBackends["Service/"+svc.GetName()] = true, true
		}
	}
	for _, o := range p.Objects {
		kind := o.GetKind()
		if kind == "ValidatingWebhookConfiguration" || kind == "MutatingWebhookConfiguration" {
			continue // calls URLs: load said the bundle leaves it out
		}
		if slices.Contains(chartOnlyKinds, kind) {
			warnings = append(warnings, fmt.Sprintf("%s %s: OLM cannot install kind %s, so the bundle leaves it out: apply it from the chart or with kubectl", kind, o.GetName(), kind))
			continue
		}
		if p.sharedNamespace(o.GetNamespace()) {
			warnings = append(warnings, fmt.Sprintf("%s %s: OLM installs a bundle's objects in the operator's namespace, not in %s, so the bundle leaves it out: apply it from the chart or with kubectl", kind, o.GetName(), o.GetNamespace()))
			continue
		}
		if kind == "Deployment" || apiBackends[kind+"/"+o.GetName()] {
			continue // in the CSV: its install strategy, its apiservicedefinitions
		}
		if !slices.Contains(bundleKinds, kind) {
			warnings = append(warnings, fmt.Sprintf("%s %s: OLM cannot install kind %s from a bundle, so the bundle leaves it out: apply it from the chart or with kubectl", kind, o.GetName(), kind))
			continue
		}
		if inCSV[kind+"/"+o.GetName()] || (p.Webhook != nil && kind == "Service" && p.Webhook.webhookService(o.GetName()) != nil) {
			continue // OLM creates these from the CSV
		}
		if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
			ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			refKind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
			if inCSV[refKind+"/"+ref] {
				continue
			}
		}
		c := o.DeepCopy()
		c.SetNamespace("")
		name := fmt.Sprintf("%s_%s_%s.yaml", c.GetName(), strings.ReplaceAll(c.GroupVersionKind().Version, "/", "_"), strings.ToLower(kind))
		if err := put(files, dir+"manifests/"+name, c.Object); err != nil {
			return nil, err
		}
	}
	for _, pac := range pacs {
		data := map[string]any{}
		for k, v := range pac.Figures {
			data[k] = v
		}
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": pac.ConfigMap}, "data": data}
		if err := put(files, dir+"manifests/"+pac.ConfigMap+"_v1_configmap.yaml", cm); err != nil {
			return nil, err
		}
	}
	return warnings, nil
}

func put(files Files, path string, obj map[string]any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	files[path] = b
	return nil
}

// pruneServerFields drops status and null creationTimestamps of a typed
// object turned into a map.
func pruneServerFields(m map[string]any) map[string]any {
	delete(m, "status")
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if e == nil && k == "creationTimestamp" {
					delete(t, k)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(m)
	return m
}
