package packaging

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	rbacv1 "k8s.io/api/rbac/v1"
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// BundleOptions tune the OLM bundle.
type BundleOptions struct {
	// Channels the bundle is published in; default "stable".
	Channels []string
	// DefaultChannel; default the first channel.
	DefaultChannel string
	// MultiNamespace allows the MultiNamespace install mode.
	MultiNamespace bool
	// Replaces, Skips and SkipRange override opctl.yaml's upgrade graph.
	Replaces  string
	Skips     []string
	SkipRange string
}

// CSV builds the ClusterServiceVersion of the project.
func (p *Project) CSV(opts BundleOptions, grants []Grant, pacs []PlatformAsCode) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	v, err := semver.Parse(p.Version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", p.Version, err)
	}
	cfg := p.Config
	cfg.Replaces = firstNonEmpty(opts.Replaces, cfg.Replaces)
	cfg.SkipRange = firstNonEmpty(opts.SkipRange, cfg.SkipRange)
	if len(opts.Skips) > 0 {
		cfg.Skips = opts.Skips
	}
	examples, err := json.MarshalIndent(sampleMaps(p), "", "  ")
	if err != nil {
		return nil, err
	}
	ann := p.csvAnnotations(cfg, string(examples))
	csv := &operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name + ".v" + p.Version, Annotations: ann},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName:    firstNonEmpty(cfg.DisplayName, p.Name),
			Description:    strings.TrimSpace(firstNonEmpty(cfg.Description, cfg.Summary, p.Name+" operator")),
			Version:        version.OperatorVersion{Version: v},
			Maturity:       firstNonEmpty(cfg.Maturity, maturity(v)),
			Keywords:       cfg.Keywords,
			Provider:       operatorsv1alpha1.AppLink{Name: cfg.Provider.Name, URL: cfg.Provider.URL},
			MinKubeVersion: cfg.MinKubeVersion,
			Replaces:       cfg.Replaces,
			Skips:          cfg.Skips,
			InstallModes:   p.installModes(opts, grants),
		},
	}
	for _, m := range cfg.Maintainers {
		csv.Spec.Maintainers = append(csv.Spec.Maintainers, operatorsv1alpha1.Maintainer{Name: m.Name, Email: m.Email})
	}
	for _, l := range cfg.Links {
		csv.Spec.Links = append(csv.Spec.Links, operatorsv1alpha1.AppLink{Name: l.Name, URL: l.URL})
	}
	if cfg.Icon != "" {
		icon, err := loadIcon(p.Dir, cfg.Icon)
		if err != nil {
			return nil, err
		}
		csv.Spec.Icon = []operatorsv1alpha1.Icon{icon}
	} else {
		csv.Spec.Icon = p.inputs.icons()
	}
	for _, crd := range p.CRDs {
		for _, d := range ownedCRD(crd) {
			d = p.inputs.description(d, crd.Spec.Group)
			if op := cfg.Operands[crd.Name]; len(op.Composition) > 0 {
				d.Resources = composition(op)
			}
			csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, d)
		}
	}
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{p.olmDeployment()}},
	}
	for _, o := range p.Objects {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := fromUnstructured(o, &d); err != nil {
			return nil, err
		}
		if p.Webhook != nil {
			p.Webhook.withoutCertVolume(&d.Spec.Template.Spec)
		}
		csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs = append(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs,
			operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: d.Labels, Spec: d.Spec})
	}
	// OLM creates the ServiceAccounts its permissions name; a Deployment's
	// account with no rules of its own gets an entry without rules.
	granted := map[string]bool{}
	for _, g := range grants {
		granted[g.ServiceAccount] = len(g.Permissions)+len(g.Cluster) > 0
	}
	for _, sa := range p.workloadAccounts() {
		if !granted[sa] {
			csv.Spec.InstallStrategy.StrategySpec.Permissions = append(csv.Spec.InstallStrategy.StrategySpec.Permissions,
				operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: []rbacv1.PolicyRule{}})
		}
	}
	for _, g := range grants {
		if len(g.Permissions) > 0 {
			csv.Spec.InstallStrategy.StrategySpec.Permissions = append(csv.Spec.InstallStrategy.StrategySpec.Permissions,
				operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: g.ServiceAccount, Rules: g.Permissions})
		}
		if len(g.Cluster) > 0 {
			csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions = append(csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions,
				operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: g.ServiceAccount, Rules: g.Cluster})
		}
	}
	if p.Webhook != nil {
		if csv.Spec.WebhookDefinitions, err = p.webhookDefinitions(); err != nil {
			return nil, err
		}
	}
	csv.Spec.APIServiceDefinitions.Owned, _ = p.apiServiceDefinitions()
	for _, img := range p.RelatedImages() {
		csv.Spec.RelatedImages = append(csv.Spec.RelatedImages, operatorsv1alpha1.RelatedImage{Name: img.Name, Image: img.Image})
	}
	return csv, nil
}

// csvAnnotations: computed defaults, then opctl.yaml's and the base CSV's
// annotations, then the fields that set annotations.
func (p *Project) csvAnnotations(cfg Config, examples string) map[string]string {
	ann := map[string]string{
		"capabilities": "Basic Install",
		"operatorframework.io/suggested-namespace": p.Namespace,
	}
	for k, v := range cfg.Annotations {
		ann[k] = v
	}
	// The image that runs, after --image, the Makefile and pinning.
	ann["containerImage"] = managerContainer(p.Manager).Image
	ann["alm-examples"] = examples
	ann["operators.operatorframework.io/builder"] = "opctl"
	if l := p.inputs.layout(); l != "" {
		ann["operators.operatorframework.io/project_layout"] = l
	}
	set := func(k, v string) {
		if v != "" {
			ann[k] = v
		}
	}
	set("capabilities", cfg.Capabilities)
	set("categories", strings.Join(cfg.Categories, ", "))
	set("description", cfg.Summary)
	set("support", cfg.Provider.Name)
	for _, l := range cfg.Links {
		if strings.EqualFold(l.Name, "source") {
			set("repository", l.URL)
		}
	}
	set("olm.skipRange", cfg.SkipRange)
	// What the tenancy controller reads before it installs (contract).
	ann[contract.WatchNamespace] = p.Watch.Annotation()
	ann[contract.PodSecurity] = p.PodSecurity.Level
	set(contract.PodSecurityReasons, p.PodSecurity.Reasons)
	return ann
}

// composition lists the kinds opctl.yaml says one custom resource runs.
func composition(op Operand) []operatorsv1alpha1.APIResourceReference {
	var out []operatorsv1alpha1.APIResourceReference
	for _, k := range op.Composition {
		out = append(out, operatorsv1alpha1.APIResourceReference{Kind: k, Version: firstNonEmpty(kindVersions[k], "v1")})
	}
	return out
}

func maturity(v semver.Version) string {
	switch {
	case v.Major >= 1:
		return "stable"
	case v.Minor >= 1:
		return "beta"
	}
	return "alpha"
}

// olmDeployment is the manager Deployment for OLM: the watch-namespace
// variables the manager reads (WATCH_NAMESPACE unless it reads others, or
// passed to its watch-namespace flag) come from the olm.targetNamespaces
// annotation, which OLM sets; none for a manager that reads none.
func (p *Project) olmDeployment() operatorsv1alpha1.StrategyDeploymentSpec {
	d := p.Manager.DeepCopy()
	if p.Webhook != nil {
		p.Webhook.withoutCertVolume(&d.Spec.Template.Spec)
	}
	c := managerContainer(d)
	names, flag := p.watchEnvNames(), p.watchFlagName()
	if flag != "" {
		// The flag takes the variable's value: $(VAR) in args.
		names = []string{"WATCH_NAMESPACE"}
		c.Args = append(c.Args, flag+"=$(WATCH_NAMESPACE)")
	}
	for _, name := range names {
		watch := corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"},
		}}
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
		if i >= 0 {
			c.Env[i] = watch
		} else {
			c.Env = append(c.Env, watch)
		}
	}
	return operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: d.Labels, Spec: d.Spec}
}

func loadIcon(dir, name string) (operatorsv1alpha1.Icon, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return operatorsv1alpha1.Icon{}, fmt.Errorf("%s: icon: %w", ConfigFile, err)
	}
	media := map[string]string{".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}[strings.ToLower(filepath.Ext(name))]
	if media == "" {
		return operatorsv1alpha1.Icon{}, fmt.Errorf("%s: icon %s: use an SVG, PNG, JPEG or GIF file", ConfigFile, name)
	}
	return operatorsv1alpha1.Icon{Data: base64.StdEncoding.EncodeToString(b), MediaType: media}, nil
}

func sampleMaps(p *Project) []map[string]any {
	out := []map[string]any{}
	for _, s := range p.Samples {
		out = append(out, s.Object)
	}
	return out
}

// kindVersions are the API versions of kinds an operand composition names.
var kindVersions = map[string]string{
	"ConfigMap": "v1", "Secret": "v1", "Service": "v1", "ServiceAccount": "v1", "PersistentVolumeClaim": "v1", "Pod": "v1",
	"StatefulSet": "v1", "Deployment": "v1", "DaemonSet": "v1", "ReplicaSet": "v1", "Job": "v1", "CronJob": "v1",
	"PodDisruptionBudget": "v1", "NetworkPolicy": "v1", "Ingress": "v1", "Role": "v1", "RoleBinding": "v1",
}

// ownedCRD describes each served version of a CRD, with descriptors
// derived from its schema.
func ownedCRD(crd *apiextensionsv1.CustomResourceDefinition) []operatorsv1alpha1.CRDDescription {
	var out []operatorsv1alpha1.CRDDescription
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		schema := v.Schema.OpenAPIV3Schema
		d := operatorsv1alpha1.CRDDescription{
			Name: crd.Name, Version: v.Name, Kind: crd.Spec.Names.Kind,
			DisplayName: displayName(crd.Spec.Names.Kind),
			Description: summary(schema.Description),
		}
		if spec, ok := schema.Properties["spec"]; ok {
			for _, name := range sortedKeys(spec.Properties) {
				f := spec.Properties[name]
				d.SpecDescriptors = append(d.SpecDescriptors, operatorsv1alpha1.SpecDescriptor{
					Path: name, DisplayName: displayName(name), Description: summary(f.Description), XDescriptors: specXDescriptors(name, f),
				})
			}
		}
		if status, ok := schema.Properties["status"]; ok {
			for _, name := range sortedKeys(status.Properties) {
				f := status.Properties[name]
				sd := operatorsv1alpha1.StatusDescriptor{Path: name, DisplayName: displayName(name), Description: summary(f.Description)}
				if name == "conditions" {
					sd.XDescriptors = []string{"urn:alm:descriptor:io.kubernetes.conditions"}
				}
				d.StatusDescriptors = append(d.StatusDescriptors, sd)
			}
		}
		out = append(out, d)
	}
	return out
}

func specXDescriptors(name string, f apiextensionsv1.JSONSchemaProps) []string {
	switch {
	case name == "replicas" || name == "size":
		return []string{"urn:alm:descriptor:com.tectonic.ui:podCount"}
	case name == "resources":
		return []string{"urn:alm:descriptor:com.tectonic.ui:resourceRequirements"}
	case name == "nodeSelector":
		return []string{"urn:alm:descriptor:com.tectonic.ui:nodeSelector"}
	case f.Type == "boolean":
		return []string{"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	case f.Type == "integer" || f.Type == "number":
		return []string{"urn:alm:descriptor:com.tectonic.ui:number"}
	case f.Type == "string" && len(f.Enum) > 0:
		var opts []string
		for _, e := range f.Enum {
			opts = append(opts, "urn:alm:descriptor:com.tectonic.ui:select:"+strings.Trim(string(e.Raw), `"`))
		}
		return opts
	case f.Type == "string":
		return []string{"urn:alm:descriptor:com.tectonic.ui:text"}
	}
	return nil
}

var wordBoundary = lazyre.New(`([a-z0-9])([A-Z])`)

// displayName turns "progressDeadlineSeconds" into "Progress Deadline Seconds".
func displayName(s string) string {
	s = wordBoundary().ReplaceAllString(s, "$1 $2")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// summary is a field's description as a descriptor shows it: the first
// sentence of its first paragraph, whose lines the comment wrapped.
func summary(s string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(s), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	if i := strings.Index(para, ". "); i >= 0 {
		para = para[:i+1]
	}
	return para
}
