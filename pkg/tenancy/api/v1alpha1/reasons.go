package v1alpha1

// Reasons of the conditions and events the controller reports.
const (
	// ReasonBundleReference refuses an InstallPlan whose steps OLM keeps as
	// references to a bundle it unpacked (a catalog of bundle images): the
	// controller cannot check what it would write.
	ReasonBundleReference = "UnpackedBundleUnsupported"
	// ReasonCRDNotShared reports an operator CRD that exists, was not
	// installed by the controller, and would need a change.
	ReasonCRDNotShared = "CRDNotShared"
	// ReasonCRDGroupReserved refuses an operator CRD in an API group a
	// tenant may not define kinds in (guard.GroupsReserved).
	ReasonCRDGroupReserved = "CRDGroupReserved"
	// ReasonCRDMetadataReserved refuses an operator bundle CRD carrying
	// the controller's own labels or annotations (tenancy.opctl.dev/*,
	// sharding.opctl.dev/*), which OLM would write on the shared CRD.
	ReasonCRDMetadataReserved = "CRDMetadataReserved"
	ReasonCRDSkew             = "CRDSkew"
	// ReasonCatalogChanged: the plan OLM made differs from the bundle the
	// controller checked.
	ReasonCatalogChanged = "CatalogChanged"
	// ReasonCatalogInTenant refuses an OLM catalog whose registry would run,
	// or runs, in a tenant namespace.
	ReasonCatalogInTenant    = "CatalogInTenantNamespace"
	ReasonCatalogUnavailable = "CatalogUnavailable"
	// ReasonClusterRightsRefused reports a release whose RBAC would grant
	// rights outside the tenant's namespaces that the platform did not allow.
	ReasonClusterRightsRefused = "ClusterRightsRefused"
	// ReasonClusterRoleNotHeld refuses a Tenant whose named ClusterRoles
	// (--tenant-cluster-roles, its profile's spec.clusterRoles) grant what
	// the controller does not hold: it could not pass them on.
	ReasonClusterRoleNotHeld = "ClusterRoleNotHeld"
	// ReasonConversionWebhook refuses a shared CRD that converts through a
	// webhook.
	ReasonConversionWebhook = "ConversionWebhookNotSupported"
	// ReasonHooksNotRun reports a chart whose hooks the release did not run:
	// Helm runs hooks past the render guard, so a tenant's release runs none.
	ReasonHooksNotRun           = "HooksNotRun"
	ReasonInstallFailed         = "InstallFailed"
	ReasonOperatorGroupConflict = "InterOperatorGroupOwnerConflict"
	// ReasonPlanChanged refuses an InstallPlan stored otherwise than the
	// controller checked and wrote it.
	ReasonPlanChanged = "InstallPlanChanged"
	// ReasonReleaseTampered reports a release whose stored or rendered
	// manifest names objects outside the tenant: the controller would act on
	// them with its own rights, so it does nothing.
	ReasonReleaseTampered       = "ReleaseTampered"
	ReasonTooManyOperatorGroups = "TooManyOperatorGroups"
	ReasonUpgradeFailed         = "UpgradeFailed"
)

// Health values of an operator instance (OperatorStatus.Health).
const (
	HealthReady       = "Ready"
	HealthProgressing = "Progressing"
	HealthFailed      = "Failed"
)
