package packaging

import (
	"encoding/json"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// values builds the documented values of the chart.
func (p *Project) values(opts ChartOptions, images []RelatedImage, pacs []PlatformAsCode) []value {
	c := managerContainer(p.Manager)
	repo, tag, digest := splitImage(c.Image)
	if tag == p.Version {
		tag = ""
	}
	repoDoc := "Image repository."
	if koPattern.MatchString(c.Image) {
		repo, tag, digest = "", "", ""
		repoDoc = "Unused: the project's release builds the operator image with ko (" + c.Image + "); set it under images, or pass --image to opctl package."
	}
	pull := string(c.ImagePullPolicy)
	if pull == "" {
		pull = "IfNotPresent"
	}
	replicas := int64(1)
	if p.Manager.Spec.Replicas != nil {
		replicas = int64(*p.Manager.Spec.Replicas)
	}
	pod := p.Manager.Spec.Template.Spec
	podSC, containerSC := any(pod.SecurityContext), any(c.SecurityContext)
	if h := p.hardening; h != nil {
		// The project's own; the template adds opctl's (podSecurity).
		podSC, containerSC = h.origPod, h.origContainers[c.Name]
	}
	args := p.managerArgs()
	priorityClass := pod.PriorityClassName
	if p.ownPriorityClass() != "" {
		priorityClass = "" // the chart's own, named per release
	}
	grace := int64(30)
	if pod.TerminationGracePeriodSeconds != nil {
		grace = *pod.TerminationGracePeriodSeconds
	}
	resources := jsonMap(c.Resources)
	if raw := p.rawManagerResources(); raw != nil {
		resources = raw // placeholders in quantities, which the template fills
	}
	relImgs := map[string]any{}
	for _, img := range images {
		relImgs[img.Name] = img.Image
	}
	pacVals := map[string]any{}
	for _, pac := range pacs {
		f := map[string]any{}
		for k, v := range pac.Figures {
			f[k] = v
		}
		pacVals[pac.CRD] = f
	}
	vs := []value{
		{Key: "nameOverride", Doc: "Overrides the chart name in object names.", Val: "", Pattern: dnsLabelOrEmpty},
		{Key: "fullnameOverride", Doc: "Overrides the full name prefix of objects.", Val: "", Pattern: dnsLabelOrEmpty},
		{Key: "replicas", Doc: "Operator replicas; more than one elects a leader.", Val: replicas},
		{Key: "image", Doc: "The operator image.", Kids: []value{
			{Key: "repository", Doc: repoDoc, Val: repo},
			{Key: "tag", Doc: "Image tag; empty means the chart's appVersion.", Val: tag},
			{Key: "digest", Doc: "Image digest (sha256:...); when set it is used instead of the tag.", Val: digest},
			{Key: "pullPolicy", Doc: "Image pull policy.", Val: pull, Enum: []string{"Always", "IfNotPresent", "Never"}},
		}},
		{Key: "imagePullSecrets", Doc: "Secrets for pulling the operator image.", Val: []any{}, Free: true},
		{Key: "args", Doc: "Arguments of the operator container, after the ones the chart sets from other values (metrics, related images).", Val: toAnyList(args.Plain), Items: "string"},
		{Key: "env", Doc: "Extra environment variables of the operator container.", Val: []any{}, Free: true},
		{Key: "envFrom", Doc: "Extra envFrom sources (ConfigMaps, Secrets) of the operator container.", Val: []any{}, Free: true},
		{Key: "podLabels", Doc: "Extra labels of the operator pod.", Val: map[string]any{}, Free: true},
		{Key: "podAnnotations", Doc: "Extra annotations of the operator pod.", Val: map[string]any{}, Free: true},
		{Key: "priorityClassName", Doc: p.priorityClassDoc(), Val: priorityClass, Pattern: dnsSubdomainOrEmpty},
		{Key: "topologySpreadConstraints", Doc: "Topology spread constraints of the operator pod.", Val: jsonList(pod.TopologySpreadConstraints), Free: true},
		{Key: "strategy", Doc: "Update strategy of the operator Deployment.", Val: jsonMap(p.Manager.Spec.Strategy), Free: true},
		{Key: "terminationGracePeriodSeconds", Doc: "Seconds the operator pod has to stop.", Val: grace},
		{Key: "extraVolumes", Doc: "Extra volumes of the operator pod.", Val: []any{}, Free: true},
		{Key: "extraVolumeMounts", Doc: "Extra volume mounts of the operator container.", Val: []any{}, Free: true},
		{Key: "resources", Doc: "Requests and limits of the operator container.", Val: resources, Free: true},
		{Key: "nodeSelector", Doc: "Node labels the operator pod must match.", Val: jsonMap(pod.NodeSelector), Free: true},
		{Key: "tolerations", Doc: "Tolerations of the operator pod.", Val: jsonList(pod.Tolerations), Free: true},
		{Key: "affinity", Doc: "Affinity of the operator pod.", Val: jsonMap(pod.Affinity), Free: true},
		{Key: "podSecurityContext", Doc: "Security context of the operator pod.", Val: jsonMap(podSC), Free: true},
		{Key: "securityContext", Doc: "Security context of the operator container.", Val: jsonMap(containerSC), Free: true},
		{Key: "serviceAccount", Doc: "The operator's ServiceAccount.", Kids: []value{
			{Key: "create", Doc: "Create the ServiceAccount.", Val: true},
			{Key: "name", Doc: "Name of the ServiceAccount; required when create is false.", Val: "", Pattern: dnsSubdomainOrEmpty},
		}},
		{Key: "rbac", Doc: "The operator's RBAC.", Kids: p.rbacValues(opts)},
		{Key: "watchNamespaces", Doc: p.watchNamespacesDoc(), Val: []any{}, Pattern: dnsLabelPattern},
		{Key: "crds", Doc: "The CRDs, when the chart carries them (--crds templated).", Kids: []value{
			{Key: "install", Doc: "Install and upgrade the CRDs with the release. Set false where another release or the platform owns them.", Val: true},
			{Key: "keep", Doc: "Keep the CRDs, and so every custom resource, when the release is uninstalled.", Val: true},
		}},
		{Key: "metrics", Doc: "The operator's metrics endpoint.", Kids: p.metricsValues(args)},
		{Key: "relatedImages", Doc: "Images the operator runs (containers, RELATED_IMAGE_* and *_IMAGE variables, --*image*= flags), by name; point them at a mirror here.", Val: relImgs, Free: true},
		{Key: "platformAsCode", Doc: "Platform-as-code figures per CRD, shipped as ConfigMaps named by the CRD annotations.", Val: pacVals, Free: true},
	}
	if h := p.hardening; h != nil {
		vs = append(vs, value{Key: "podSecurity", Doc: "Pod Security of the operator pod.", Kids: []value{
			{Key: "restricted", Doc: "Add to its security contexts what opctl package found missing for Pod Security restricted (" + h.summary() + "); false renders the project's own.", Val: true},
		}})
	}
	if p.Webhook != nil {
		vs = append(vs,
			value{Key: "webhooks", Doc: "The operator's admission webhooks.", Kids: []value{
				{Key: "enabled", Doc: p.webhooksEnabledDoc(), Val: true},
				{Key: "port", Doc: "Port of the webhook Service, which the API server calls; it forwards to the manager's webhook server.", Val: int64(p.Webhook.Port), Min: 1, Max: 65535},
			}})
		if p.Webhook.Certificates != CertsOperator {
			vs = append(vs, value{Key: "certManager", Doc: "Serving certificates from cert-manager instead of a self-signed CA generated by Helm.", Kids: []value{
				{Key: "enabled", Doc: "Use cert-manager (it must be installed): an Issuer, a Certificate and CA injection.", Val: false},
			}})
		}
	}
	if (p.Webhook == nil || p.Webhook.Certificates == CertsOperator) && p.carriesCertManager() {
		vs = append(vs, value{Key: "certManager", Doc: "The project's cert-manager objects (config/certmanager).", Kids: []value{
			{Key: "enabled", Doc: "Render them (cert-manager must be installed).", Val: false},
		}})
	}
	if slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Namespace" }) {
		vs = append(vs, value{Key: "sharedNamespaces", Doc: "The namespaces the operator uses beside the release's.", Kids: []value{
			{Key: "create", Doc: "Create them; a cluster holds one of each, so set false in every release but one.", Val: true},
		}})
	}
	if len(p.apiServices()) > 0 {
		vs = append(vs, value{Key: "apiService", Doc: "The aggregated APIs the project serves.", Kids: []value{
			{Key: "enabled", Doc: "Register the APIServices; their names are the API versions they serve, so set false in every release but the one that owns them.", Val: true},
		}})
	}
	for _, c := range components {
		if on, ok := p.Components[c.Value]; ok {
			vs = append(vs, value{Key: c.Value, Doc: "The project's config/" + c.Dir + " component.", Kids: []value{
				{Key: "enabled", Doc: "Render config/" + c.Dir + ".", Val: on},
			}})
		}
	}
	for _, k := range sortedKeys(p.Config.ExtraValues) {
		doc := firstNonEmpty(p.Config.ExtraValueDocs[k], "From extraValues in "+ConfigFile+".")
		vs = append(vs, value{Key: k, Doc: doc, Val: p.Config.ExtraValues[k], Free: true})
	}
	return vs
}

// jsonMap and jsonList turn typed values into plain YAML-able ones.
func jsonMap(v any) map[string]any {
	m := map[string]any{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func jsonList(v any) []any {
	l := []any{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &l)
	}
	if l == nil {
		l = []any{}
	}
	return l
}

// rbacValues are the rbac.* values; helpers only when the project has
// helper roles.
func (p *Project) rbacValues(opts ChartOptions) []value {
	vs := []value{
		{Key: "create", Doc: "Create Roles, ClusterRoles and their bindings.", Val: true},
		{Key: "scope", Doc: "namespace: Roles in each watched namespace (the release namespace by default) plus a minimal ClusterRole for cluster-scoped rules; cluster: one ClusterRole.", Val: opts.RBACScope, Enum: []string{"namespace", "cluster"}},
	}
	if slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "ClusterRole" && p.helperRole(o) }) {
		vs = append(vs, value{Key: "helpers", Doc: "The admin, editor and viewer ClusterRoles for users of the CRDs.", Kids: []value{
			{Key: "enabled", Doc: "Create the helper ClusterRoles.", Val: false},
		}})
	}
	return vs
}

// metricsValues are the metrics.* values; port and secure when the
// manager takes them as flags.
func (p *Project) metricsValues(a ManagerArgs) []value {
	vs := []value{{Key: "enabled", Doc: "Create the metrics Service.", Val: true}}
	if a.MetricsPort != 0 {
		vs = append(vs, value{Key: "port", Doc: "Port of the metrics endpoint (--metrics-bind-address) and its Service.", Val: int64(a.MetricsPort), Min: 1, Max: 65535})
	}
	if a.SecureFlag {
		vs = append(vs, value{Key: "secure", Doc: "Serve metrics over HTTPS with authentication and authorization (--metrics-secure).", Val: a.MetricsSecure})
	}
	return vs
}

func toAnyList(s []string) []any {
	out := []any{}
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

func (p *Project) priorityClassDoc() string {
	if pc := p.ownPriorityClass(); pc != "" {
		return "PriorityClass of the operator pod; empty means the chart's own (" + strings.TrimPrefix(pc, p.NamePrefix) + ")."
	}
	return "PriorityClass of the operator pod."
}

// watchNamespacesDoc documents watchNamespaces: how the chart passes them,
// or that the manager reads none.
func (p *Project) watchNamespacesDoc() string {
	doc := "Namespaces the operator watches; empty means the release namespace with rbac.scope=namespace, all namespaces with rbac.scope=cluster."
	switch {
	case p.allNamespacesOnly():
		return "Unused: the manager reads no watch-namespace setting (opctl package found none in its code), so it watches all namespaces."
	case p.watchFlagName() != "":
		return doc + " Passed as " + p.watchFlagName() + " (joined with commas), which the manager reads."
	case p.Watch.Reads():
		return doc + " Set as " + strings.Join(p.watchEnvNames(), " and ") + " (joined with commas), which the manager reads."
	}
	return doc + " Set as WATCH_NAMESPACE."
}

// webhooksEnabledDoc documents webhooks.enabled, with the env variables
// it sets for a manager that reads them.
func (p *Project) webhooksEnabledDoc() string {
	doc := "Register the webhooks and serve them; false renders nothing webhook-related"
	if names := p.webhookEnvNames(); len(names) > 0 {
		return doc + " and sets " + strings.Join(names, " and ") + ", which the manager reads, so it starts no webhook server."
	}
	return doc + "."
}
