package tenancy

// The controller's permissions, generated into config/rbac/role.yaml by
// `make generate`. README.md explains each one. They are what the
// controller uses and no more: it writes with patches and server-side
// applies (update only for records, certificates, InstallPlan status and
// the ClusterRoles of OLM plans), and reads
// what it caches through its informers (no get). After the whole suite,
// a check fails on any right none of its requests used
// (rights_exercised_test.go).
//
// Tenants and profiles: read, the finalizer and the status.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants,verbs=list;watch;patch
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenantprofiles,verbs=list;watch
//
// Tenant namespaces and what the controller puts in each: the quota, the
// LimitRange, the NetworkPolicies, the owners' and the actor's bindings,
// and the actor's Roles (actor.go). The controller grants only what it
// holds, with three exceptions, each by name: it binds admin (to the
// owners and the actor), and writes and binds the Role tenant-kinds, which
// grants the operators' own kinds, whose CRDs it installs for the tenants
// and does not use itself. RBAC cannot scope escalate to namespaces that
// do not exist yet (a RoleBinding granting it in each new tenant namespace
// would need bind on its role everywhere), so the guardrail
// tenant-kinds-role admits rules in that Role only in a namespace labelled
// for the Role's tenant. The platform's named ClusterRoles are bound to
// the controller too, so that it may pass them on.
// +kubebuilder:rbac:groups="",resources=namespaces;resourcequotas;limitranges,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=admin
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=bind;escalate,resourceNames=tenant-kinds
//
// The API server's addresses (the kubernetes Service and its
// EndpointSlices), which tenant egress policies allow.
// +kubebuilder:rbac:groups="",resources=services,verbs=list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch
//
// Shared CRDs of the tenants' operators.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;patch;delete
//
// Helm releases. Each tenant's actor, a ServiceAccount of the controller's
// namespace, writes the objects of its releases in the tenant's namespaces
// (actor.go): the controller impersonates it, and only reads what drift
// correction and readiness follow. The release records and the webhook
// certificates are Secrets of the controller's namespace.
// +kubebuilder:rbac:groups="",namespace=opctl-system,resources=serviceaccounts,verbs=impersonate;create;patch;delete
// +kubebuilder:rbac:groups="",namespace=opctl-system,resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch
//
// The ServiceAccount an OLM tenant's OperatorGroup names, tenant-operators
// in the tenant's first namespace (olm_build.go): created, and changed or
// deleted by that name only.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=patch;delete,resourceNames=tenant-operators
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
//
// A release's cluster-scoped RBAC, which the grant policy (grants.go) has
// checked, is the controller's to write: the actor holds nothing outside
// the tenant's namespaces. Its ClusterRoles are bound cluster-wide and so
// hold only what the named ClusterRoles cover, which the controller holds;
// the render guard makes the release's other ClusterRoles Roles in the
// tenant's namespaces (localize.go), which the actor writes.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get;list;create;patch;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=get;create;patch;update;delete
//
// Catalog ConfigMaps, read one by one, outside tenant namespaces.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
//
// The webhook configurations of bundle operators, named for the tenant
// and the release and narrowed to the tenant's namespaces.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;create;patch;delete
//
// The guardrail policies (config/guardrails) let whoever holds this
// verb through: the controller and cluster admins, and a tenant's actor
// in the tenant's namespaces for the objects of its releases (the Role the
// controller gives it holds the verb there). The resource is virtual;
// nothing serves it.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=guardrails,verbs=bypass
//
// Events for every action.
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
//
// OLM installs: the OperatorGroup, CatalogSource and Subscription of each
// OLM tenant; InstallPlans to approve them, and their status to mark the
// CSV and the cluster-wide RBAC the controller wrote for them
// (olm_rbac.go); CSVs to create them so, read their phase and delete them
// with the tenant. OLM creates the
// operator's Deployment and namespaced RBAC as the OperatorGroup's
// ServiceAccount.
// +kubebuilder:rbac:groups=operators.coreos.com,resources=operatorgroups;catalogsources;subscriptions,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans/status,verbs=update
// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions,verbs=get;list;watch;create;delete
