package kit

import (
	"bytes"
	"fmt"
	"text/template"
)

// kindInfo is what the templates need to know of a resource kind.
type kindInfo struct {
	// Type is the Go type, Package its import.
	Type, Package string
	// Imports of the resource file besides context and client.
	Imports []string
	// Initial and FromCR are the default bodies of the two methods, after
	// the labels; templates over resourceData.
	Initial, FromCR string
	// Ready names the readiness helper of package resources, if any.
	Ready string
	// Group and Resource are the RBAC rule of the kind.
	Group, Resource string
}

const (
	importApps      = `appsv1 "k8s.io/api/apps/v1"`
	importCore      = `corev1 "k8s.io/api/core/v1"`
	importMeta      = `metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"`
	importResources = `"opctl.dev/opctl/pkg/operatorkit/resources"`
	importQuantity  = `"k8s.io/apimachinery/pkg/api/resource"`
)

// podTemplate is the default pod of a Deployment or a StatefulSet.
const podTemplate = `	o.Spec.Selector = &metav1.LabelSelector{MatchLabels: {{.K.Lower}}Labels(owner, "{{.R.Name}}")}
	o.Spec.Template.Labels = {{.K.Lower}}Labels(owner, "{{.R.Name}}")
	o.Spec.Template.Spec.Containers = []corev1.Container{{"{{"}}Name: "{{.R.Name}}", Image: "registry.example/{{.R.Name}}:latest"{{"}}"}}`

var kinds = map[string]kindInfo{
	"ConfigMap": {Type: "corev1.ConfigMap", Imports: []string{importCore, importMeta},
		FromCR: `	o.Data = map[string]string{}`, Group: "core", Resource: "configmaps"},
	"Secret": {Type: "corev1.Secret", Imports: []string{importCore, importMeta, importResources},
		Initial: `	if err := resources.SetSecretPassword(o, "password", 24); err != nil {
		return err
	}`, FromCR: `	_ = o`, Group: "core", Resource: "secrets"},
	"Service": {Type: "corev1.Service", Imports: []string{importCore, importMeta, importResources},
		Initial: `	o.Spec.Selector = {{.K.Lower}}Labels(owner, "")
	o.Spec.Ports = []corev1.ServicePort{{"{{"}}Name: "main", Port: 8080, Protocol: corev1.ProtocolTCP{{"}}"}}`,
		FromCR: `	_ = o`, Ready: "ServiceReady", Group: "core", Resource: "services"},
	"Deployment": {Type: "appsv1.Deployment", Imports: []string{importApps, importCore, importMeta, importResources},
		Initial: podTemplate, FromCR: `	_ = o`, Ready: "DeploymentReady", Group: "apps", Resource: "deployments"},
	"StatefulSet": {Type: "appsv1.StatefulSet", Imports: []string{importApps, importCore, importMeta, importResources},
		Initial: `	o.Spec.ServiceName = owner.Name + "-{{.R.Name}}"
` + podTemplate, FromCR: `	_ = o`, Ready: "StatefulSetReady", Group: "apps", Resource: "statefulsets"},
	"PersistentVolumeClaim": {Type: "corev1.PersistentVolumeClaim", Imports: []string{importCore, importQuantity, importMeta, importResources},
		Initial: `	o.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}`,
		FromCR: `	// Growing the request expands the volume; it never shrinks.
	if err := resources.ExpandPVC(ctx, r.Client, o, resource.MustParse("1Gi")); err != nil {
		return err
	}`, Ready: "PVCReady", Group: "core", Resource: "persistentvolumeclaims"},
}

// typeName is the Go type of r: the kind's name and the resource's.
func typeName(k Kind, r Resource) string { return k.Kind + r.Ident() }

// resourceData is the data of resource.go.tmpl.
type resourceData struct {
	P               *Project
	K               Kind
	R               Resource
	Info            kindInfo
	Type            string
	Initial, FromCR string
}

func newResourceData(p *Project, k Kind, r Resource) (resourceData, error) {
	d := resourceData{P: p, K: k, R: r, Info: kinds[r.Kind], Type: typeName(k, r)}
	var err error
	if d.Initial, err = expand(d.Info.Initial, d); err != nil {
		return d, err
	}
	d.FromCR, err = expand(d.Info.FromCR, d)
	return d, err
}

func expand(text string, data any) (string, error) {
	t, err := template.New("snippet").Parse(text)
	if err != nil {
		return "", fmt.Errorf("snippet: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("snippet: %w", err)
	}
	return b.String(), nil
}
