// Package packaging turns an operator project in kubebuilder/operator-sdk
// layout into what opctl package writes: a Helm chart under charts/<name>
// and an OLM registry+v1 bundle under bundle/<name>.
//
// It has two layers. The project model understands the project: Load
// builds the kustomize overlay (config/default) in process with krusty and
// sorts its objects into a Project (CRDs, the manager Deployment, other
// workloads and objects, webhooks and their certificates, optional
// components, samples). The other inputs come by precedence: flags
// (Options), opctl.yaml, operator-sdk's base CSV and +operator-sdk:csv
// markers (read with go/parser, nothing built), the Makefile, then what the
// overlay and the PROJECT file give. The model's analyses (RBAC grants,
// related and operand images, webhook serving, platform-as-code figures,
// kind scopes) and the CRDs as shipped are shared by every output.
//
// Load accepts what kustomize builds: where the input is ambiguous or odd
// (several Deployments, samples that are not CRs, a placeholder VERSION, a
// second Namespace, …) it decides, and a warning names the file and says
// what it did; PackageOptions.Strict makes warnings errors. It refuses only
// output that would be wrong, such as a chart whose Helm release record
// would not fit its Secret in any layout. Each warning has a case in
// TestWarnings, each refusal one in TestBadInputGivesClearErrors.
//
// Targets render a Project. A Target names itself, its output folder (Dir)
// and its options (NewOptions gives TargetOptions, which bind their own
// flags), and registers itself with RegisterTarget in its init function: a
// new output is one new file, and the CLI builds its flags, --<name>-only
// included, from the registry. The chart and the bundle are the targets
// today; each reads the Project, never the other.
//
// Package is the flow: it selects the targets (all by default), loads once,
// pins image digests if asked, renders the targets side by side with their
// options from PackageOptions.PerTarget, and writes the merged Files one
// root at a time through a temporary directory and a rename, so a failure
// leaves earlier output as it was. The same input always gives
// byte-identical output.
package packaging
