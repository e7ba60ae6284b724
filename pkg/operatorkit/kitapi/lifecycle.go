package kitapi

// Lifecycle is a lifecycle phase the user of a custom resource may wish
// for in its spec: Running, Servicing (a service operation) or Stopping
// (stop for good). The enum and the transition rule are those of
// operatorkit's standard lifecycle graph (lifecycle.Standard, Wishable and
// WishRule; a test keeps them equal), so the API server refuses a wish the
// graph forbids from the previous one. opctl kit writes the same markers
// on a type of each kind it scaffolds.
// +kubebuilder:validation:Enum=Running;Servicing;Stopping
// +kubebuilder:validation:XValidation:rule="self == oldSelf || (oldSelf == 'Running' && self in ['Servicing', 'Stopping']) || (oldSelf == 'Servicing' && self in ['Running', 'Stopping'])",message="the lifecycle graph forbids this wish: Running may change to Servicing or Stopping; Servicing may change to Running or Stopping; Stopping may change to nothing else"
type Lifecycle string
