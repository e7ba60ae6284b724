package packaging

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// WebhookServing is how the manager serves its admission webhooks.
type WebhookServing struct {
	// Service is the overlay name of the Service the webhooks call.
	Service string
	// Port is the Service port; TargetPort the container port behind it.
	Port       int32
	TargetPort intstr.IntOrString
	// Secret holds the serving certificate; Volume mounts it. Both are
	// empty when the operator manages its certificates.
	Secret, Volume string
	// Certificates is helm, cert-manager or operator.
	Certificates string
	// SelfManaged names the manager's env vars and flags that look like
	// switches of its own certificate management (operator mode).
	SelfManaged []string
}

// Webhook certificate modes (opctl.yaml webhooks.certificates).
const (
	CertsHelm        = "helm"
	CertsCertManager = "cert-manager"
	CertsOperator    = "operator"
)

var certModes = []string{CertsHelm, CertsCertManager, CertsOperator}

// webhookServing finds the Service the webhooks call and the volume that
// mounts their serving certificate in the manager.
func (p *Project) webhookServing() (*WebhookServing, error) {
	w := &WebhookServing{}
	for _, c := range p.conversionCRDs() {
		svc := c.Spec.Conversion.Webhook.ClientConfig.Service
		if svc == nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: the conversion webhook has no clientConfig.service: opctl serves webhooks from the manager through a Service", c.Name)
		}
		name := svc.Name
		if !p.hasService(name) && p.hasService(p.NamePrefix+name) {
			name = p.NamePrefix + name // kustomize left the reference unprefixed
		}
		if w.Service != "" && w.Service != name {
			return nil, fmt.Errorf("CustomResourceDefinition %s: conversion webhooks call Services %s and %s; use one webhook Service", c.Name, w.Service, name)
		}
		w.Service = name
	}
	for _, o := range p.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			name, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "name")
			if name == "" {
				return nil, fmt.Errorf("%s %s: webhook %v has no clientConfig.service: opctl serves webhooks from the manager through a Service", o.GetKind(), o.GetName(), h.(map[string]any)["name"])
			}
			if w.Service != "" && w.Service != name {
				return nil, fmt.Errorf("%s %s: webhooks call Services %s and %s; use one webhook Service", o.GetKind(), o.GetName(), w.Service, name)
			}
			w.Service = name
		}
	}
	i := slices.IndexFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Service" && o.GetName() == w.Service })
	if i < 0 {
		return nil, fmt.Errorf("the webhooks call Service %s, which the overlay does not define (config/webhook/service.yaml)", w.Service)
	}
	port, err := p.webhookPort(p.Objects[i])
	if err != nil {
		return nil, err
	}
	w.Port = int32(toInt(port["port"]))
	w.TargetPort = intstr.FromInt32(w.Port)
	switch tp := port["targetPort"].(type) {
	case string:
		w.TargetPort = intstr.FromString(tp)
	case int64, float64:
		w.TargetPort = intstr.FromInt32(int32(toInt(tp)))
	}
	for _, v := range p.Manager.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		for _, m := range managerContainer(p.Manager).VolumeMounts {
			if m.Name == v.Name && strings.Contains(m.MountPath, "serving-certs") {
				w.Secret, w.Volume = v.Secret.SecretName, v.Name
			}
		}
	}
	w.Certificates = p.Config.Webhooks.Certificates
	switch {
	case w.Certificates == "" && w.Secret == "":
		w.Certificates = CertsOperator
	case w.Certificates == "" && len(p.CertManager) > 0:
		w.Certificates = CertsCertManager
	case w.Certificates == "":
		w.Certificates = CertsHelm
	}
	if w.Certificates == CertsOperator {
		// The operator's volume, if any, mounts the Secret it writes.
		w.Secret, w.Volume = "", ""
		w.SelfManaged = certSwitches(*managerContainer(p.Manager))
		return w, nil
	}
	if w.Secret == "" {
		return nil, fmt.Errorf("manager Deployment %s mounts no serving certificate for the webhooks, and %s sets webhooks.certificates: %s: add the cert volume of config/default/manager_webhook_patch.yaml, or set webhooks.certificates: operator if the operator issues its own",
			p.Manager.Name, ConfigFile, w.Certificates)
	}
	return w, nil
}

// webhookPort is the port of the webhook Service that the webhooks call:
// their clientConfig.service.port, 443 when unset. Other ports of the
// Service (metrics, say) stay as they are.
func (p *Project) webhookPort(svc *unstructured.Unstructured) (map[string]any, error) {
	i, err := p.webhookPortIndex(svc)
	if err != nil {
		return nil, err
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	return ports[i].(map[string]any), nil
}

// webhookPortIndex is the index of webhookPort in the Service's ports.
func (p *Project) webhookPortIndex(svc *unstructured.Unstructured) (int, error) {
	want := int64(443)
	for _, c := range p.conversionCRDs() {
		if s := c.Spec.Conversion.Webhook.ClientConfig.Service; s != nil && s.Port != nil {
			want = int64(*s.Port)
		}
	}
	for _, o := range p.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			if v, ok, _ := unstructured.NestedInt64(h.(map[string]any), "clientConfig", "service", "port"); ok {
				want = v
			}
		}
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(ports) == 1 {
		return 0, nil
	}
	for i, pt := range ports {
		if m, _ := pt.(map[string]any); toInt(m["port"]) == want {
			return i, nil
		}
	}
	return 0, fmt.Errorf("webhook Service %s has no port %d, which the webhooks call (clientConfig.service.port): the API server could not reach them", svc.GetName(), want)
}

func (p *Project) hasService(name string) bool {
	return slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Service" && o.GetName() == name })
}

// conversionCRDs are the CRDs converted by a webhook of the release (a
// Service); one that calls a URL is carried as it is.
func (p *Project) conversionCRDs() []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, c := range p.CRDs {
		if conv := c.Spec.Conversion; conv != nil && conv.Strategy == apiextensionsv1.WebhookConverter && conv.Webhook != nil && conv.Webhook.ClientConfig != nil && conv.Webhook.ClientConfig.URL == nil {
			out = append(out, c)
		}
	}
	return out
}

// certSwitches are the env vars and flags of a container that look like
// switches of its own certificate management.
func certSwitches(c corev1.Container) []string {
	var out []string
	looks := func(s string) bool {
		s = strings.ToLower(s)
		return strings.Contains(s, "cert") && !strings.Contains(s, "dir") && !strings.Contains(s, "path")
	}
	for _, e := range c.Env {
		if looks(e.Name) {
			out = append(out, "env "+e.Name)
		}
	}
	for _, a := range slices.Concat(c.Command, c.Args) {
		flag, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(flag, "-") && looks(flag) {
			out = append(out, "flag "+flag)
		}
	}
	return out
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// webhookDefinitions describes the webhooks for OLM, which issues and
// injects the certificates itself.
func (p *Project) webhookDefinitions() ([]operatorsv1alpha1.WebhookDescription, error) {
	var out []operatorsv1alpha1.WebhookDescription
	for _, o := range p.Webhooks {
		typ := operatorsv1alpha1.ValidatingAdmissionWebhook
		if o.GetKind() == "MutatingWebhookConfiguration" {
			typ = operatorsv1alpha1.MutatingAdmissionWebhook
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := fromUnstructured(o, &m); err != nil {
				return nil, err
			}
			for _, h := range m.Webhooks {
				d := description(p, typ, h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions)
				d.ReinvocationPolicy = h.ReinvocationPolicy
				out = append(out, d)
			}
			continue
		}
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := fromUnstructured(o, &v); err != nil {
			return nil, err
		}
		for _, h := range v.Webhooks {
			out = append(out, description(p, typ, h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions))
		}
	}
	// One ConversionWebhook per path, listing the CRDs it converts.
	byPath := map[string]*operatorsv1alpha1.WebhookDescription{}
	var paths []string
	for _, c := range p.conversionCRDs() {
		conv := c.Spec.Conversion.Webhook
		path := "/convert"
		if conv.ClientConfig.Service.Path != nil {
			path = *conv.ClientConfig.Service.Path
		}
		d, ok := byPath[path]
		if !ok {
			none := admissionregistrationv1.SideEffectClassNone
			fail := admissionregistrationv1.Fail
			d = &operatorsv1alpha1.WebhookDescription{
				GenerateName: "c" + strings.TrimPrefix(strings.ReplaceAll(path, "/", "-"), "-") + "." + c.Spec.Group,
				Type:         operatorsv1alpha1.ConversionWebhook, DeploymentName: p.Manager.Name,
				ContainerPort: p.Webhook.Port, TargetPort: &p.Webhook.TargetPort, WebhookPath: &path,
				AdmissionReviewVersions: conv.ConversionReviewVersions, SideEffects: &none, FailurePolicy: &fail,
			}
			byPath[path] = d
			paths = append(paths, path)
		}
		d.ConversionCRDs = append(d.ConversionCRDs, c.Name)
	}
	slices.Sort(paths)
	for _, path := range paths {
		out = append(out, *byPath[path])
	}
	return out, nil
}

func description(p *Project, typ operatorsv1alpha1.WebhookAdmissionType, name string, cc admissionregistrationv1.WebhookClientConfig,
	rules []admissionregistrationv1.RuleWithOperations, fp *admissionregistrationv1.FailurePolicyType, mp *admissionregistrationv1.MatchPolicyType,
	sel *metav1.LabelSelector, se *admissionregistrationv1.SideEffectClass, timeout *int32, versions []string) operatorsv1alpha1.WebhookDescription {
	d := operatorsv1alpha1.WebhookDescription{
		GenerateName: name, Type: typ, DeploymentName: p.Manager.Name,
		ContainerPort: p.Webhook.Port, TargetPort: &p.Webhook.TargetPort,
		Rules: rules, FailurePolicy: fp, MatchPolicy: mp, ObjectSelector: sel, SideEffects: se,
		TimeoutSeconds: timeout, AdmissionReviewVersions: versions,
	}
	if cc.Service != nil {
		d.WebhookPath = cc.Service.Path
	}
	return d
}

// withoutCertVolume removes the webhook certificate volume and its mounts
// from a pod spec: OLM mounts its own.
func (w *WebhookServing) withoutCertVolume(spec *corev1.PodSpec) {
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == w.Volume })
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = slices.DeleteFunc(spec.Containers[i].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == w.Volume })
	}
}
