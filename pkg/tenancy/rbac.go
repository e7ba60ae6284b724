package tenancy

// The controller's permissions, generated into config/rbac/role.yaml by
// `make generate`. README.md explains each one.
//
// Tenants and profiles: read, the finalizer and the status.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenantprofiles,verbs=get;list;watch
//
// Tenant namespaces and what the controller puts in each.
// +kubebuilder:rbac:groups="",resources=namespaces;resourcequotas;limitranges,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;patch;update;delete
//
// The API server's addresses (the kubernetes Service's EndpointSlices),
// which tenant egress policies allow.
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
//
// Shared CRDs of the tenants' operators.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;patch;update;delete
//
// Helm releases: the release records (Secrets) and the objects of the
// operator charts, in tenant namespaces and, for their cluster roles,
// cluster-wide. bind and escalate let the controller grant a tenant's
// operator and owners roles (admin, the chart's rules) it does not use
// itself.
// +kubebuilder:rbac:groups="",resources=secrets;configmaps;services;serviceaccounts,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;clusterroles;clusterrolebindings,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;clusterroles,verbs=bind;escalate
//
// The monitoring objects operator charts ship (opctl's charts render
// them when the cluster serves monitoring.coreos.com).
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors;podmonitors;prometheusrules,verbs=get;list;watch;create;patch;update;delete
//
// The webhook configurations of bundle operators, named for the tenant
// and the release and narrowed to the tenant's namespaces.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;create;patch;update;delete
//
// The guardrail policies (config/guardrails) let whoever holds this
// verb through: the controller and cluster admins. The resource is
// virtual; nothing serves it.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=guardrails,verbs=bypass
//
// Events for every action.
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
//
// OLM installs: the OperatorGroup, CatalogSource and Subscription of each
// OLM tenant; InstallPlans to approve them; CSVs to read their phase and
// delete them with the tenant. OLM itself creates the operator's
// Deployment and RBAC.
// +kubebuilder:rbac:groups=operators.coreos.com,resources=operatorgroups;catalogsources;subscriptions,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions,verbs=get;list;watch;delete
