package packaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"opctl.dev/opctl/internal/crschema"
)

// MaxObjectBytes is the largest object opctl accepts: etcd's default
// request limit (--max-request-bytes, 1.5 MiB), past which the API server
// cannot store it. Objects between 1 and 1.5 MiB install: CRDs of that
// size ship in real projects, and OLM carries them.
const MaxObjectBytes = 3 << 19

// Options select and override what Load reads.
type Options struct {
	// Overlay is the kustomize directory, relative to the project;
	// default config/default.
	Overlay string
	// Name, Version and Image override opctl.yaml and the overlay.
	Name, Version, Image string
	// Manager names the manager Deployment when there are several.
	Manager string
	// SetEnv fills the manifests' ${VAR} placeholders in the bundle and
	// is the chart's default of placeholders.VAR (--set-env VAR=value).
	SetEnv map[string]string
}

// Project is an operator project, built and sorted.
type Project struct {
	// Dir is the project directory; Overlay the kustomize directory in it.
	Dir, Overlay string
	// Name and Version of the package.
	Name, Version string
	// Config is opctl.yaml.
	Config Config
	// Namespace the overlay installs into, and the name prefix it adds.
	Namespace, NamePrefix string
	// CRDs, sorted by name.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Manager is the operator Deployment; managerRaw the same as built.
	Manager    *appsv1.Deployment
	managerRaw *unstructured.Unstructured
	// Objects are all other objects, sorted by kind, namespace and name.
	Objects []*unstructured.Unstructured
	// Webhooks are the admission webhook configurations; CertManager the
	// cert-manager objects that serve them in the overlay.
	Webhooks, CertManager []*unstructured.Unstructured
	// Webhook is how the manager serves the webhooks; set with Webhooks.
	Webhook *WebhookServing
	// Optional are the objects of optional components (config/prometheus,
	// config/network-policy) the overlay leaves out; the chart carries them
	// behind a value. Components says which exist, and whether the overlay
	// includes them.
	Optional        []*unstructured.Unstructured
	Components      map[string]bool
	componentValues map[string]string
	// Samples are the custom resources in config/samples.
	Samples []*unstructured.Unstructured
	// Watch is what the manager's code says of the namespaces it watches.
	Watch WatchNamespace
	// PodSecurity is the Pod Security level of the pods shipped, after
	// opctl made the manager's pods meet restricted where it could.
	PodSecurity PodSecurity
	// hardening is what opctl added for restricted; nil when nothing.
	hardening *hardening
	// setEnv fills placeholders: Options.SetEnv.
	setEnv map[string]string

	// inputs are the sources besides the overlay: PROJECT, the Makefile,
	// the base CSV and the markers.
	inputs *inputs

	// warnings say what Load left out or assumed, naming the file.
	warnings []string

	// analysis caches Grants and PlatformAsCode, which the chart and the
	// bundle both need; neither depends on images, so pinning keeps it valid.
	analysis *analysis
}

type analysis struct {
	grants   []Grant
	pacs     []PlatformAsCode
	warnings []string
	// crdTexts are the rendered CRDs by name.
	crdTexts map[string][]byte
}

// analyze computes the grants and platform-as-code figures once.
func (p *Project) analyze() (*analysis, error) {
	if p.analysis != nil {
		return p.analysis, nil
	}
	grants, grantWarnings, err := p.grants()
	if err != nil {
		return nil, err
	}
	pacs, pacWarnings, err := p.PlatformAsCode()
	if err != nil {
		return nil, err
	}
	warnings := slices.Concat(p.inputs.warningList(), p.warnings, grantWarnings, pacWarnings, p.imageWarnings())
	texts, err := p.crdTexts(pacs)
	if err != nil {
		return nil, err
	}
	p.analysis = &analysis{grants: grants, pacs: pacs, warnings: warnings, crdTexts: texts}
	return p.analysis, nil
}

// Load builds the project's overlay and sorts its objects. Metadata comes,
// by precedence, from the options (flags), opctl.yaml, operator-sdk's base
// CSV and markers, the Makefile, and what the overlay and the PROJECT file
// give.
func Load(dir string, opts Options) (*Project, error) {
	if opts.Overlay == "" {
		opts.Overlay = filepath.Join("config", "default")
	}
	in, err := loadInputs(dir, opts)
	if err != nil {
		return nil, err
	}
	p := &Project{Dir: dir, Overlay: opts.Overlay, Config: in.config, inputs: in, setEnv: opts.SetEnv}
	if p.Name, err = projectName(dir, opts.Name, in.config.Name, in.projectFile); err != nil {
		return nil, err
	}
	if p.Version, err = projectVersion(opts.Version, in.config.Version); err != nil {
		return nil, err
	}
	if opts.Version == "" && in.config.Version == "" && in.make.badVersion != "" {
		p.Version = placeholderVersion
		p.warnf("%s: VERSION %q is a placeholder (not SemVer, or 0.0.0, which OLM reads as no version), so the package has version %s: pass --version in the release flow, or set version in %s", filepath.Join(dir, "Makefile"), in.make.badVersion, placeholderVersion, ConfigFile)
	}
	objs, err := buildOverlay(filepath.Join(dir, opts.Overlay))
	if err != nil {
		return nil, err
	}
	if err := p.sort(objs, firstNonEmpty(opts.Manager, in.config.Manager)); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, opts.Overlay), err)
	}
	if opts.Image == "" && in.make.badImage != "" {
		p.warnf("%s: IMG %q is not an image reference (a variable the release flow sets?), so the manager keeps the overlay's image: pass --image in the release flow", filepath.Join(dir, "Makefile"), in.make.badImage)
	}
	if image := firstNonEmpty(opts.Image, in.make.Image); image != "" {
		managerContainer(p.Manager).Image = image
		if err := setRawImage(p.managerRaw, managerContainer(p.Manager).Name, image); err != nil {
			return nil, err
		}
	}
	p.loadComponents()
	df := loadDockerfile(dir)
	p.Watch = p.detectWatchNamespace(df)
	p.watchWarnings()
	if err := p.hardenManager(df); err != nil {
		return nil, err
	}
	if err := p.judgePodSecurity(); err != nil {
		return nil, err
	}
	p.Samples = p.loadSamples(filepath.Join(dir, "config", "samples"))
	return p, nil
}

// managerAccount gives a manager that runs as its namespace's default
// ServiceAccount (no serviceAccountName, as fluxcd's controllers) an
// account object, so the chart creates one per release and the bindings
// of "default" follow it.
func (p *Project) managerAccount() {
	spec := &p.Manager.Spec.Template.Spec
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = "default"
		_ = unstructured.SetNestedField(p.managerRaw.Object, "default", "spec", "template", "spec", "serviceAccountName")
	}
	if slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "ServiceAccount" && o.GetName() == spec.ServiceAccountName
	}) {
		return
	}
	sa := &unstructured.Unstructured{}
	sa.SetAPIVersion("v1")
	sa.SetKind("ServiceAccount")
	sa.SetName(spec.ServiceAccountName)
	sa.SetNamespace(p.Namespace)
	p.Objects = append(p.Objects, sa)
	p.warnf("manager Deployment %s runs as ServiceAccount %s, which the overlay does not define: the chart creates it per release (serviceAccount.create), and OLM from the CSV", p.Manager.Name, spec.ServiceAccountName)
}

// sortNamespaces keeps the operator's Namespace as the release namespace
// and carries the others (where the operator keeps leases or daemon
// configuration) as shared objects.
func (p *Project) sortNamespaces(namespaces []*unstructured.Unstructured) {
	for _, ns := range namespaces {
		if ns.GetName() == p.Namespace {
			continue
		}
		p.Objects = append(p.Objects, ns)
		p.warnf("the overlay creates Namespace %s beside the operator's %s: the chart creates it under its own name behind sharedNamespaces.create (a cluster holds one, so set false in every release but one), and the objects in it stay there", ns.GetName(), p.Namespace)
	}
}

// sharedNamespace reports a namespace of the overlay other than the
// operator's, which the chart keeps by name.
func (p *Project) sharedNamespace(ns string) bool {
	return ns != "" && ns != p.Namespace && slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" && o.GetName() == ns
	})
}

// stringMapPaths hold maps whose values Kubernetes types as strings.
var stringMapPaths = [][]string{
	{"metadata", "labels"}, {"metadata", "annotations"},
	{"spec", "selector", "matchLabels"}, {"spec", "selector"},
	{"spec", "template", "metadata", "labels"}, {"spec", "template", "metadata", "annotations"},
	{"spec", "jobTemplate", "spec", "template", "metadata", "labels"},
}

// builtinGroups are the API groups whose spec selectors and pod templates
// stringMapPaths describe.
var builtinGroups = map[string]bool{"": true, "apps": true, "batch": true, "policy": true, "networking.k8s.io": true}

// stringLabels makes the numbers and booleans of o's label and annotation
// maps strings, as their YAML author meant (rht.comp_ver: 2.16), and
// names the keys it changed.
func stringLabels(o *unstructured.Unstructured) []string {
	var fixed []string
	for _, path := range stringMapPaths {
		if path[0] == "spec" && !builtinGroups[o.GroupVersionKind().Group] {
			continue // a custom resource's spec means what its CRD says
		}
		m, ok, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
		mm, isMap := m.(map[string]any)
		if !ok || !isMap {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(mm)) {
			switch v := mm[k].(type) {
			case int64:
				mm[k] = strconv.FormatInt(v, 10)
			case float64:
				mm[k] = strconv.FormatFloat(v, 'f', -1, 64)
			case bool:
				mm[k] = strconv.FormatBool(v)
			default:
				continue
			}
			fixed = append(fixed, strings.Join(path, ".")+"."+k)
		}
	}
	return fixed
}

// callsURLs reports a webhook configuration all of whose webhooks call a
// URL rather than a Service.
func callsURLs(o *unstructured.Unstructured) bool {
	hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
	for _, h := range hooks {
		if _, ok, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "url"); !ok {
			return false
		}
	}
	return len(hooks) > 0
}

// warnf records a warning: what opctl left out or assumed, and why.
func (p *Project) warnf(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// projectName is --name, else the layered configuration's name, else the
// PROJECT file's projectName, else the directory name.
func projectName(dir, flag, cfg string, pf *ProjectFile) (string, error) {
	name := firstNonEmpty(flag, cfg)
	if name == "" && pf != nil {
		name = pf.ProjectName
	}
	if name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		name = filepath.Base(abs)
	}
	if !dnsLabel(name) {
		return "", fmt.Errorf("package name %q is not a DNS label (lower-case letters, digits and '-', at most 53 characters): set --name or name in %s", name, ConfigFile)
	}
	return name, nil
}

func dnsLabel(s string) bool {
	if s == "" || len(s) > 53 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// placeholderVersion is the version of a package whose project sets no
// real one: the lowest that OLM still reads as a version (0.0.0 is none).
const placeholderVersion = "0.0.0-dev"

func projectVersion(flag, cfg string) (string, error) {
	v := firstNonEmpty(flag, cfg, "0.1.0")
	sv, err := semver.Parse(v)
	if err != nil {
		return "", fmt.Errorf("version %q is not SemVer (like 1.2.3): set --version or version in %s", v, ConfigFile)
	}
	if sv.Equals(semver.Version{}) {
		return "", fmt.Errorf("version 0.0.0: OLM reads a CSV of version 0.0.0 as having none and refuses it: set --version or version in %s", ConfigFile)
	}
	return v, nil
}

// buildOverlay runs kustomize on dir in process.
func buildOverlay(dir string) ([]*unstructured.Unstructured, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("kustomize overlay %s not found: pass --overlay with the directory of the project's kustomization", dir)
	}
	opts := krusty.MakeDefaultOptions()
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, explainBuild(dir, err)
	}
	res := rm.Resources()
	out := make([]*unstructured.Unstructured, len(res))
	errs := make([]error, len(res))
	parallel(len(res), func(i int) {
		var err error
		if out[i], err = overlayObject(&res[i].RNode); err != nil {
			errs[i] = fmt.Errorf("%s: %s: %w", dir, res[i].CurId(), err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// sort files the overlay's objects into the project.
func (p *Project) sort(objs []*unstructured.Unstructured, manager string) error {
	var deployments, namespaces []*unstructured.Unstructured
	p.dropPlaceholderKeys(objs)
	for _, o := range objs {
		if err := checkSize(o); err != nil {
			return err
		}
		if fixed := stringLabels(o); len(fixed) > 0 {
			p.warnf("%s %s: %s are not strings in the YAML (unquoted numbers or booleans), which Kubernetes refuses: opctl quoted them; quote them in the project", o.GetKind(), o.GetName(), strings.Join(fixed, ", "))
		}
		switch o.GetKind() {
		case "Namespace":
			namespaces = append(namespaces, o)
		case "CustomResourceDefinition":
			crd, err := toCRD(o)
			if err != nil {
				return err
			}
			p.CRDs = append(p.CRDs, crd)
		case "Deployment":
			deployments = append(deployments, o)
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			if callsURLs(o) {
				// A webhook outside the cluster: nothing of the release
				// serves it, so it is carried as it is.
				p.Objects = append(p.Objects, o)
				p.warnf("%s %s calls URLs, not a Service of the overlay: the chart carries it as it is, and the bundle leaves it out (OLM serves only webhooks of the CSV's Deployments)", o.GetKind(), o.GetName())
				continue
			}
			p.Webhooks = append(p.Webhooks, o)
		default:
			if o.GroupVersionKind().Group == "cert-manager.io" {
				p.CertManager = append(p.CertManager, o)
				continue
			}
			p.Objects = append(p.Objects, o)
		}
	}
	d, rest, err := p.pickManager(deployments, manager)
	if err != nil {
		return err
	}
	p.Objects = append(p.Objects, rest...)
	p.managerRaw = d
	if p.Manager, err = p.decodeManager(d); err != nil {
		return fmt.Errorf("manager %w", err)
	}
	if len(p.Manager.Spec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("manager Deployment %s: spec.template.spec.containers is empty", d.GetName())
	}
	p.Namespace = p.Manager.Namespace
	if p.Namespace == "" && len(namespaces) > 0 {
		p.Namespace = namespaces[0].GetName()
	}
	p.sortNamespaces(namespaces)
	if len(p.CRDs) == 0 {
		// An operator of built-in kinds (or of an aggregated API) owns no
		// CRD; its chart and bundle are still right.
		p.warnf("no CustomResourceDefinition in the overlay, so the package owns none: if the operator serves custom resources, add config/crd to the overlay")
	}
	slices.SortFunc(p.CRDs, func(a, b *apiextensionsv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Objects, compareObjects)
	slices.SortFunc(p.Webhooks, compareObjects)
	slices.SortFunc(p.CertManager, compareObjects)
	p.NamePrefix = namePrefix(p.Manager.Name, p.Objects)
	p.managerAccount()
	p.bindSubjects()
	p.dropInertSubresources()
	if len(p.Webhooks) > 0 || len(p.conversionCRDs()) > 0 {
		w, err := p.webhookServing()
		if err != nil {
			return err
		}
		p.Webhook = w
	}
	p.splitCertManager()
	return nil
}

// remoteResource finds the remote base krusty could not fetch.
var remoteResource = lazyre.New(`accumulating resources from '((?:https?://|git::|ssh://|github\.com/|gitlab\.com/)[^']+)'`)

// explainBuild says what to do about the two build failures that come
// from outside the project: a remote base that cannot be fetched, and
// helmCharts, which kustomize renders only with --enable-helm.
func explainBuild(dir string, err error) error {
	msg := err.Error()
	switch m := remoteResource().FindStringSubmatch(msg); {
	case strings.Contains(msg, "--enable-helm"):
		return fmt.Errorf("building kustomize overlay %s: a kustomization uses helmCharts, which kustomize renders only with --enable-helm and a helm binary, and opctl does not run one: render the chart (helm template) into a file the overlay lists under resources", dir)
	case m != nil:
		return fmt.Errorf("building kustomize overlay %s: the remote base %s could not be fetched (it needs the network, as kustomize build does): check the URL and the network, or vendor the base into the project: %w", dir, m[1], err)
	}
	return fmt.Errorf("building kustomize overlay %s: %w", dir, err)
}

func compareObjects(a, b *unstructured.Unstructured) int {
	return strings.Compare(a.GetKind()+"/"+a.GetNamespace()+"/"+a.GetName(), b.GetKind()+"/"+b.GetNamespace()+"/"+b.GetName())
}

// pickManager finds the manager Deployment: the one named, the only one,
// or the one with the most evidence of being the manager (managerEvidence);
// the others are carried as extra workloads. Several without a single best
// are a warning, not a refusal: the first by name is taken.
func (p *Project) pickManager(ds []*unstructured.Unstructured, name string) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	var names []string
	for _, d := range ds {
		names = append(names, d.GetName())
	}
	pick := -1
	switch {
	case name != "":
		pick = slices.IndexFunc(ds, func(d *unstructured.Unstructured) bool { return d.GetName() == name })
		if pick < 0 {
			return nil, nil, fmt.Errorf("manager Deployment %q not found; the overlay has Deployments %v", name, names)
		}
	case len(ds) == 1:
		pick = 0
	case len(ds) == 0:
		return nil, nil, errors.New("no Deployment in the overlay: the manager Deployment (config/manager) is missing")
	default:
		slices.SortFunc(ds, compareObjects)
		names = names[:0]
		for _, d := range ds {
			names = append(names, d.GetName())
		}
		best, bestScore, tie := -1, -1, false
		var why []string
		for i, d := range ds {
			ev := p.managerEvidence(d)
			score := 0
			for _, e := range ev {
				score += e.weight
			}
			switch {
			case score > bestScore:
				best, bestScore, tie = i, score, false
				why = why[:0]
				for _, e := range ev {
					why = append(why, e.what)
				}
			case score == bestScore:
				tie = true
			}
		}
		pick = best
		others := slices.Delete(slices.Clone(names), pick, pick+1)
		if tie || len(why) == 0 {
			p.warnf("several Deployments %v could be the manager and none stands out, so opctl took %s and carries %v as extra workloads: pass --manager or set manager in %s", names, names[pick], others, ConfigFile)
		} else {
			p.warnf("the overlay has Deployments %v: opctl took %s as the manager (%s) and carries %v as extra workloads; pass --manager or set manager in %s to choose another", names, names[pick], strings.Join(why, ", "), others, ConfigFile)
		}
	}
	rest := slices.Delete(slices.Clone(ds), pick, pick+1)
	return ds[pick], rest, nil
}

// evidence is one reason to take a Deployment for the manager; weight 2
// is strong, 1 a hint that breaks ties.
type evidence struct {
	what   string
	weight int
}

// managerEvidence says why d looks like the operator's manager: the
// kubebuilder label, a --leader-elect flag, a ServiceAccount bound to a
// role over the project's custom resources, operand images in its env
// (RELATED_IMAGE_*), and as hints its name and being the pods the webhooks
// call (a separate webhook server is called too).
func (p *Project) managerEvidence(d *unstructured.Unstructured) []evidence {
	var why []evidence
	if d.GetLabels()["control-plane"] == "controller-manager" {
		why = append(why, evidence{"label control-plane=controller-manager", 2})
	}
	var typed appsv1.Deployment
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, &typed)
	containers := slices.Concat(typed.Spec.Template.Spec.InitContainers, typed.Spec.Template.Spec.Containers)
	for _, c := range containers {
		if slices.ContainsFunc(slices.Concat(c.Args, c.Command), func(a string) bool { return a == "--leader-elect" || a == "--leader-elect=true" }) {
			why = append(why, evidence{"container " + c.Name + " has --leader-elect", 2})
			break
		}
	}
	for _, c := range containers {
		if imgs := OperandImages(c); len(imgs) > 0 {
			why = append(why, evidence{"container " + c.Name + " names operand images (" + imgs[0].Key + ")", 2})
			break
		}
	}
	if role := p.crRoleOf(typed.Spec.Template.Spec.ServiceAccountName); role != "" {
		why = append(why, evidence{"its ServiceAccount " + typed.Spec.Template.Spec.ServiceAccountName + " is bound to " + role + ", which manages the project's custom resources", 2})
	}
	if n := strings.ToLower(d.GetName()); strings.Contains(n, "manager") || strings.Contains(n, "controller") {
		why = append(why, evidence{"its name", 1})
	}
	if p.webhookSelects(d) {
		why = append(why, evidence{"the webhooks' Service selects its pods", 1})
	}
	return why
}

// crRoleOf names a role bound to the ServiceAccount sa whose rules reach
// the project's CRD groups, or "".
func (p *Project) crRoleOf(sa string) string {
	groups := map[string]bool{}
	for _, c := range p.CRDs {
		groups[c.Spec.Group] = true
	}
	rules := map[string][]any{}
	for _, o := range p.Objects {
		if o.GetKind() == "Role" || o.GetKind() == "ClusterRole" {
			r, _, _ := unstructured.NestedSlice(o.Object, "rules")
			rules[o.GetKind()+"/"+o.GetName()] = r
		}
	}
	for _, o := range p.Objects {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		if !slices.ContainsFunc(subjects, func(s any) bool {
			m, _ := s.(map[string]any)
			return m["kind"] == "ServiceAccount" && m["name"] == sa
		}) {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		for _, r := range rules[kind+"/"+name] {
			gs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
			if slices.ContainsFunc(gs, func(g string) bool { return groups[g] }) {
				return kind + " " + name
			}
		}
	}
	return ""
}

// webhookSelects reports whether a webhook's Service selects d's pods.
func (p *Project) webhookSelects(d *unstructured.Unstructured) bool {
	services := map[string]bool{}
	for _, w := range p.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
		for _, h := range hooks {
			if n, ok, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "name"); ok {
				services[n] = true
			}
		}
	}
	podLabels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	for _, o := range p.Objects {
		if o.GetKind() != "Service" || !services[o.GetName()] {
			continue
		}
		sel, ok, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		if ok && len(sel) > 0 && labelsMatch(sel, podLabels) {
			return true
		}
	}
	return false
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func checkSize(o *unstructured.Unstructured) error {
	b, err := json.Marshal(o.Object)
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
	}
	if len(b) > MaxObjectBytes {
		return fmt.Errorf("%s %s is %d bytes, over the %d bytes the API server can store (etcd's request limit): split it or trim its descriptions", o.GetKind(), o.GetName(), len(b), MaxObjectBytes)
	}
	return nil
}

// toCRD converts and checks a CRD: every version needs a schema.
func toCRD(o *unstructured.Unstructured) (*apiextensionsv1.CustomResourceDefinition, error) {
	if o.GetAPIVersion() != "apiextensions.k8s.io/v1" {
		return nil, fmt.Errorf("CustomResourceDefinition %s: apiVersion %s is not supported: use apiextensions.k8s.io/v1", o.GetName(), o.GetAPIVersion())
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := fromUnstructured(o, crd); err != nil {
		return nil, err
	}
	for i, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: spec.versions[%d] (%s) has no schema.openAPIV3Schema: generate it with controller-gen (make manifests)", crd.Name, i, v.Name)
		}
	}
	return crd, nil
}

// namePrefix is the kustomize namePrefix the overlay applied: the longest
// prefix ending in '-' that the manager and every namespaced object share.
func namePrefix(manager string, objs []*unstructured.Unstructured) string {
	prefix := manager
	for _, o := range objs {
		if o.GetKind() == "APIService" {
			continue // kustomize keeps its name: the group version it serves
		}
		for !strings.HasPrefix(o.GetName(), prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if i := strings.LastIndex(prefix, "-"); i >= 0 {
		return prefix[:i+1]
	}
	return ""
}

// loadSamples reads the custom resources in dir: its kustomization when it
// has one, else every YAML file. A sample that is not of a project CRD (an
// Ingress, a configuration type with no CRD) is left out with a warning:
// the CSV's alm-examples and the chart's samples are the CRs. Samples
// never stop packaging: what cannot be read is left out with a warning.
func (p *Project) loadSamples(dir string) []*unstructured.Unstructured {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var objs []*unstructured.Unstructured
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err == nil {
		built, err := buildOverlay(dir)
		if err != nil {
			// The samples are not the overlay: a package without examples
			// is still right.
			p.warnf("%s: the samples' kustomization does not build, so the package has no examples: %v", dir, err)
			return nil
		}
		objs = built
	} else {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		slices.Sort(files)
		for _, f := range files {
			docs, err := readYAMLDocs(f)
			if err != nil {
				// As a kustomization that does not build: the package is
				// still right without these examples.
				p.warnf("%v, so the samples of that file are left out of the examples", err)
				continue
			}
			objs = append(objs, docs...)
		}
	}
	kinds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range p.CRDs {
		for _, v := range c.Spec.Versions {
			kinds[c.Spec.Group+"/"+v.Name+"/"+c.Spec.Names.Kind] = c
		}
	}
	schemas := map[string]*crschema.Schema{}
	var crs []*unstructured.Unstructured
	for _, o := range objs {
		id := o.GetAPIVersion() + " " + o.GetKind() + " " + o.GetName()
		crd := kinds[o.GetAPIVersion()+"/"+o.GetKind()]
		if crd == nil {
			p.warnf("%s: sample %s is not a custom resource of the project's CRDs, so it is left out of the examples", dir, id)
			continue
		}
		// A sample the API server would refuse would be a broken example
		// in the CSV and the chart's README.
		schema, err := sampleSchema(schemas, crd, o.GroupVersionKind().Version)
		var errs field.ErrorList
		if err == nil {
			errs, err = schema.Validate(o.Object)
		}
		if err == nil && len(errs) > 0 {
			err = errs.ToAggregate()
		}
		if err != nil {
			p.warnf("%s: sample %s would be refused by the API server (%v), so it is left out of the examples", dir, id, err)
			continue
		}
		crs = append(crs, o)
	}
	slices.SortFunc(crs, compareObjects)
	return crs
}

// sampleSchema is the compiled schema of version of crd, compiled once
// for all of a CRD's samples.
func sampleSchema(schemas map[string]*crschema.Schema, crd *apiextensionsv1.CustomResourceDefinition, version string) (*crschema.Schema, error) {
	key := crd.Name + "/" + version
	if s, ok := schemas[key]; ok {
		return s, nil
	}
	s, err := crschema.Compile(crd, version)
	if err != nil {
		return nil, err
	}
	schemas[key] = s
	return s, nil
}

// readYAMLDocs decodes every document of a YAML file.
func readYAMLDocs(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: document %d has no apiVersion or kind", path, i+1)
		}
		out = append(out, u)
	}
}
