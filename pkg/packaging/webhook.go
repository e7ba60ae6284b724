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
	// Service is the overlay name of the first Service the webhooks call
	// (conversion webhooks first); Port and TargetPort are its webhook
	// port, which the chart's webhooks.port sets.
	Service string
	// Port is the Service port; TargetPort the container port behind it.
	Port       int32
	TargetPort intstr.IntOrString
	// Services are all the Services the webhooks call, Service first:
	// each keeps its own ports.
	Services []WebhookService
	// Secret holds the serving certificate; Volume mounts it. Both are
	// empty when the operator manages its certificates.
	Secret, Volume string
	// Certificates is helm, cert-manager or operator.
	Certificates string
	// SelfManaged names the manager's env vars and flags that look like
	// switches of its own certificate management (operator mode).
	SelfManaged []string
}

// WebhookService is one Service that webhooks call.
type WebhookService struct {
	// Name is the Service's overlay name.
	Name string
	// Port is the Service port the webhooks call; TargetPort the container
	// port behind it.
	Port       int32
	TargetPort intstr.IntOrString
}

// webhookService is the Service named name, or nil.
func (w *WebhookServing) webhookService(name string) *WebhookService {
	for i := range w.Services {
		if w.Services[i].Name == name {
			return &w.Services[i]
		}
	}
	return nil
}

// Webhook certificate modes (opctl.yaml webhooks.certificates).
const (
	CertsHelm        = "helm"
	CertsCertManager = "cert-manager"
	CertsOperator    = "operator"
)

var certModes = []string{CertsHelm, CertsCertManager, CertsOperator}

// webhookCall is one webhook's call to a Service.
type webhookCall struct {
	// owner names the configuration or CRD, for messages.
	owner, hook, service string
	// port is clientConfig.service.port; nil means 443.
	port *int64
}

// webhookCalls lists the Services the conversion and admission webhooks
// call, conversion webhooks first.
func (p *Project) webhookCalls() ([]webhookCall, error) {
	var out []webhookCall
	for _, c := range p.conversionCRDs() {
		svc := c.Spec.Conversion.Webhook.ClientConfig.Service
		if svc == nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: the conversion webhook has no clientConfig.service: opctl serves webhooks from the manager through a Service", c.Name)
		}
		call := webhookCall{owner: "CustomResourceDefinition " + c.Name, hook: "conversion", service: p.conversionService(c)}
		if svc.Port != nil {
			port := int64(*svc.Port)
			call.port = &port
		}
		out = append(out, call)
	}
	for _, o := range p.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			hook := h.(map[string]any)
			name, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "name")
			if name == "" {
				return nil, fmt.Errorf("%s %s: webhook %v has no clientConfig.service: opctl serves webhooks from the manager through a Service", o.GetKind(), o.GetName(), hook["name"])
			}
			call := webhookCall{owner: o.GetKind() + " " + o.GetName(), hook: fmt.Sprint(hook["name"]), service: name}
			if v, ok, _ := unstructured.NestedInt64(hook, "clientConfig", "service", "port"); ok {
				call.port = &v
			}
			out = append(out, call)
		}
	}
	return out, nil
}

// webhookServing finds the Services the webhooks call and the volume that
// mounts their serving certificate in the manager.
func (p *Project) webhookServing() (*WebhookServing, error) {
	w := &WebhookServing{}
	calls, err := p.webhookCalls()
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		if w.webhookService(c.service) != nil {
			continue
		}
		i := slices.IndexFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Service" && o.GetName() == c.service })
		if i < 0 {
			return nil, fmt.Errorf("%s: webhook %s calls Service %s, which the overlay does not define (config/webhook/service.yaml)", c.owner, c.hook, c.service)
		}
		port, err := p.webhookPort(p.Objects[i])
		if err != nil {
			return nil, err
		}
		s := WebhookService{Name: c.service, Port: int32(toInt(port["port"]))}
		s.TargetPort = intstr.FromInt32(s.Port)
		switch tp := port["targetPort"].(type) {
		case string:
			s.TargetPort = intstr.FromString(tp)
		case int64, float64:
			s.TargetPort = intstr.FromInt32(int32(toInt(tp)))
		}
		w.Services = append(w.Services, s)
	}
	w.Service, w.Port, w.TargetPort = w.Services[0].Name, w.Services[0].Port, w.Services[0].TargetPort
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

// webhookPort is the port of a webhook Service that its webhooks call:
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
	calls, err := p.webhookCalls()
	if err != nil {
		return 0, err
	}
	for _, c := range calls {
		if c.service == svc.GetName() && c.port != nil {
			want = *c.port
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
// injects the certificates itself. Each webhook is served by the
// Deployment its Service selects, at that Service's ports.
func (p *Project) webhookDefinitions() ([]operatorsv1alpha1.WebhookDescription, error) {
	var out []operatorsv1alpha1.WebhookDescription
	serve := func(d *operatorsv1alpha1.WebhookDescription, owner string, cc admissionregistrationv1.WebhookClientConfig) error {
		name := p.Webhook.Service
		if cc.Service != nil {
			name = cc.Service.Name
			d.WebhookPath = cc.Service.Path
		}
		if !p.hasService(name) && p.hasService(p.NamePrefix+name) {
			name = p.NamePrefix + name
		}
		s := p.Webhook.webhookService(name)
		if s == nil {
			return fmt.Errorf("%s: webhook %s calls Service %s, which is not a webhook Service of the project", owner, d.GenerateName, name)
		}
		deploy, err := p.serviceDeployment(name)
		if err != nil {
			return fmt.Errorf("%s: webhook %s: %w", owner, d.GenerateName, err)
		}
		d.DeploymentName, d.ContainerPort, d.TargetPort = deploy, s.Port, &s.TargetPort
		return nil
	}
	for _, o := range p.Webhooks {
		owner := o.GetKind() + " " + o.GetName()
		typ := operatorsv1alpha1.ValidatingAdmissionWebhook
		if o.GetKind() == "MutatingWebhookConfiguration" {
			typ = operatorsv1alpha1.MutatingAdmissionWebhook
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := fromUnstructured(o, &m); err != nil {
				return nil, err
			}
			for _, h := range m.Webhooks {
				d := description(typ, h.Name, h.Rules, h.FailurePolicy, h.MatchPolicy, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions)
				d.ReinvocationPolicy = h.ReinvocationPolicy
				if err := serve(&d, owner, h.ClientConfig); err != nil {
					return nil, err
				}
				out = append(out, d)
			}
			continue
		}
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := fromUnstructured(o, &v); err != nil {
			return nil, err
		}
		for _, h := range v.Webhooks {
			d := description(typ, h.Name, h.Rules, h.FailurePolicy, h.MatchPolicy, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions)
			if err := serve(&d, owner, h.ClientConfig); err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	// One ConversionWebhook per Service and path, listing the CRDs it
	// converts.
	byPath := map[string]*operatorsv1alpha1.WebhookDescription{}
	var keys []string
	for _, c := range p.conversionCRDs() {
		conv := c.Spec.Conversion.Webhook
		path := "/convert"
		if conv.ClientConfig.Service.Path != nil {
			path = *conv.ClientConfig.Service.Path
		}
		key := conv.ClientConfig.Service.Name + path
		d, ok := byPath[key]
		if !ok {
			none := admissionregistrationv1.SideEffectClassNone
			fail := admissionregistrationv1.Fail
			d = &operatorsv1alpha1.WebhookDescription{
				GenerateName:            "c" + strings.TrimPrefix(strings.ReplaceAll(path, "/", "-"), "-") + "." + c.Spec.Group,
				Type:                    operatorsv1alpha1.ConversionWebhook,
				AdmissionReviewVersions: conv.ConversionReviewVersions, SideEffects: &none, FailurePolicy: &fail,
			}
			svc := conv.ClientConfig.Service
			if err := serve(d, "CustomResourceDefinition "+c.Name, admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: svc.Name, Path: &path}}); err != nil {
				return nil, err
			}
			byPath[key] = d
			keys = append(keys, key)
		}
		d.ConversionCRDs = append(d.ConversionCRDs, c.Name)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, *byPath[k])
	}
	return out, nil
}

// serviceDeployment is the Deployment of the project whose pods the
// Service selects: the manager's first.
func (p *Project) serviceDeployment(service string) (string, error) {
	i := slices.IndexFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Service" && o.GetName() == service })
	if i < 0 {
		return "", fmt.Errorf("its Service %s is not in the overlay", service)
	}
	sel, _, _ := unstructured.NestedStringMap(p.Objects[i].Object, "spec", "selector")
	if subset(sel, p.Manager.Spec.Template.Labels) {
		return p.Manager.Name, nil
	}
	for _, o := range p.Objects {
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		if o.GetKind() == "Deployment" && subset(sel, labels) {
			return o.GetName(), nil
		}
	}
	return "", fmt.Errorf("its Service %s selects no Deployment of the project (spec.selector %v), and OLM serves a webhook from a Deployment of the CSV: make the Service select the pods that serve it", service, sel)
}

func description(typ operatorsv1alpha1.WebhookAdmissionType, name string,
	rules []admissionregistrationv1.RuleWithOperations, fp *admissionregistrationv1.FailurePolicyType, mp *admissionregistrationv1.MatchPolicyType,
	sel *metav1.LabelSelector, se *admissionregistrationv1.SideEffectClass, timeout *int32, versions []string) operatorsv1alpha1.WebhookDescription {
	return operatorsv1alpha1.WebhookDescription{
		GenerateName: name, Type: typ,
		Rules: rules, FailurePolicy: fp, MatchPolicy: mp, ObjectSelector: sel, SideEffects: se,
		TimeoutSeconds: timeout, AdmissionReviewVersions: versions,
	}
}

// withoutCertVolume removes the webhook certificate volume (the manager's,
// or any volume of the serving Secret) and its mounts from a pod spec: OLM
// mounts its own.
func (w *WebhookServing) withoutCertVolume(spec *corev1.PodSpec) {
	var names []string
	for _, v := range spec.Volumes {
		if v.Name == w.Volume || (w.Secret != "" && v.Secret != nil && v.Secret.SecretName == w.Secret) {
			names = append(names, v.Name)
		}
	}
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return slices.Contains(names, v.Name) })
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = slices.DeleteFunc(spec.Containers[i].VolumeMounts, func(m corev1.VolumeMount) bool { return slices.Contains(names, m.Name) })
	}
}
