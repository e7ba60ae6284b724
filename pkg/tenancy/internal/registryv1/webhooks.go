package registryv1

import (
	"fmt"
	"slices"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// renderedWebhooks are the objects of a CSV's webhook definitions, and the
// Deployments that serve them.
type renderedWebhooks struct {
	objects []*unstructured.Unstructured
	served  map[string]bool
}

// webhooks renders the CSV's admission webhooks as OLM does: a Service
// <deployment>-service in front of each serving Deployment, a TLS Secret
// <deployment>-service-cert that the controller issues, and one webhook
// configuration per definition, named for the tenant and the release,
// trusting the controller's CA and narrowed to what the tenant owns
// (narrowWebhooks). Conversion
// webhooks are refused: a CRD is shared by every tenant, so one tenant's
// operator cannot convert for all of them.
func (r *bundleRenderer) webhooks(csv *operatorsv1alpha1.ClusterServiceVersion) (*renderedWebhooks, error) {
	out := &renderedWebhooks{served: map[string]bool{}}
	defs := csv.Spec.WebhookDefinitions
	if len(defs) == 0 {
		return out, nil
	}
	deployments := map[string]*operatorsv1alpha1.StrategyDeploymentSpec{}
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[d.Name] = &csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[i]
	}
	var serving []string
	for _, w := range defs {
		if w.Type == operatorsv1alpha1.ConversionWebhook {
			return nil, operatorkit.Terminal(tenancyv1.ReasonConversionWebhook, fmt.Errorf(
				"%s: webhook %s converts CRDs %v, which every tenant shares, so one tenant's operator cannot serve it: install this operator once for the cluster", csv.Name, w.GenerateName, w.ConversionCRDs))
		}
		if deployments[w.DeploymentName] == nil {
			return nil, operatorkit.Terminal("InvalidBundle", fmt.Errorf("%s: webhook %s names deployment %q, which the install strategy does not have", csv.Name, w.GenerateName, w.DeploymentName))
		}
		if !out.served[w.DeploymentName] {
			out.served[w.DeploymentName] = true
			serving = append(serving, w.DeploymentName)
		}
	}
	slices.Sort(serving)
	certs, err := r.in.Certs(serving)
	if err != nil {
		return nil, err
	}
	ports := map[string][]corev1.ServicePort{}
	for _, w := range defs {
		port := w.ContainerPort
		if port == 0 {
			port = 443
		}
		target := intstr.FromInt32(port)
		if w.TargetPort != nil {
			target = *w.TargetPort
		}
		sp := corev1.ServicePort{Name: fmt.Sprintf("%d", port), Port: port, TargetPort: target}
		if !slices.ContainsFunc(ports[w.DeploymentName], func(p corev1.ServicePort) bool { return p.Port == port }) {
			ports[w.DeploymentName] = append(ports[w.DeploymentName], sp)
		}
	}
	for _, d := range serving {
		spec := deployments[d]
		var selector map[string]string
		if spec.Spec.Selector != nil {
			selector = spec.Spec.Selector.MatchLabels
		}
		out.objects = append(out.objects,
			r.typed(&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: webhookServiceName(d), Namespace: r.ns},
				Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports[d]}}),
			r.typed(&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: webhookServiceName(d) + "-cert", Namespace: r.ns}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: certs.Serving[d].Cert, corev1.TLSPrivateKeyKey: certs.Serving[d].Key, "ca.crt": certs.CACert}}))
	}
	for _, w := range defs {
		if w.ContainerPort == 0 {
			w.ContainerPort = 443
		}
		meta := metav1.ObjectMeta{Name: r.clusterName(w.GenerateName)}
		var cfg *unstructured.Unstructured
		switch w.Type {
		case operatorsv1alpha1.ValidatingAdmissionWebhook:
			cfg = r.typed(&admissionregistrationv1.ValidatingWebhookConfiguration{
				TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
				ObjectMeta: meta, Webhooks: []admissionregistrationv1.ValidatingWebhook{w.GetValidatingWebhook(r.ns, nil, certs.CACert)}})
		case operatorsv1alpha1.MutatingAdmissionWebhook:
			cfg = r.typed(&admissionregistrationv1.MutatingWebhookConfiguration{
				TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
				ObjectMeta: meta, Webhooks: []admissionregistrationv1.MutatingWebhook{w.GetMutatingWebhook(r.ns, nil, certs.CACert)}})
		default:
			return nil, operatorkit.Terminal("InvalidBundle", fmt.Errorf("%s: webhook %s has unknown type %q", csv.Name, w.GenerateName, w.Type))
		}
		guard.NarrowWebhooks(cfg, r.in.Namespaces)
		out.objects = append(out.objects, cfg)
	}
	return out, nil
}

// The paths where OLM mounts a webhook certificate.
const (
	apiserviceCertPath = "/apiserver.local.config/certificates"
	webhookCertPath    = "/tmp/k8s-webhook-server/serving-certs"
)

// mountWebhookCert mounts a Deployment's webhook certificate into every
// container where OLM mounts it: apiserviceCertPath (apiserver.crt,
// apiserver.key) and webhookCertPath (tls.crt, tls.key), where
// controller-runtime looks. As OLM does, it takes those paths over: a
// mount the bundle has there (kubebuilder's scaffold mounts a Secret that
// cert-manager would make) is replaced, and its volume dropped when
// nothing else mounts it, since two mounts at one path are invalid.
func mountWebhookCert(pod *corev1.PodSpec, deployment string) {
	ours := map[string]bool{"apiservice-cert": true, "webhook-cert": true}
	replaced := map[string]bool{}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			if m.MountPath == apiserviceCertPath || m.MountPath == webhookCertPath || ours[m.Name] {
				replaced[m.Name] = true
				return true
			}
			return false
		})
	}
	stillMounted := map[string]bool{}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, m := range c.VolumeMounts {
			stillMounted[m.Name] = true
		}
	}
	pod.Volumes = slices.DeleteFunc(pod.Volumes, func(v corev1.Volume) bool {
		return ours[v.Name] || (replaced[v.Name] && !stillMounted[v.Name])
	})
	secret := webhookServiceName(deployment) + "-cert"
	pod.Volumes = append(pod.Volumes,
		corev1.Volume{Name: "apiservice-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret,
			Items: []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: "apiserver.crt"}, {Key: corev1.TLSPrivateKeyKey, Path: "apiserver.key"}}}}},
		corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret,
			Items: []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}, {Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}}}}})
	for i := range pod.Containers {
		pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts,
			corev1.VolumeMount{Name: "apiservice-cert", MountPath: apiserviceCertPath},
			corev1.VolumeMount{Name: "webhook-cert", MountPath: webhookCertPath})
	}
}
