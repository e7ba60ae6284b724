// Package packaging turns an operator project in kubebuilder/operator-sdk
// layout into a Helm chart and an OLM registry+v1 bundle.
//
// It has two layers. The project model loads and understands the project:
// Load builds the kustomize overlay (config/default) in process with krusty
// and sorts its objects into a Project (CRDs, the manager Deployment, other
// workloads and objects, webhooks and their certificates, optional
// components, samples), reading the other inputs by precedence: flags,
// opctl.yaml, operator-sdk's base CSV and +operator-sdk:csv markers (with
// go/parser, nothing built), the Makefile, then what the overlay and the
// PROJECT file give (input*.go). The model's analyses are RBAC grants
// (rbac.go), related and operand images (relatedimages.go,
// operandimages.go), webhook serving (webhook.go), platform-as-code figures
// (pac.go) and kind scopes (kinds.go).
//
// Load accepts what kustomize builds: where opctl would once have refused
// (several Deployments, samples that are not CRs or do not parse, a
// placeholder VERSION, a binding of a role the cluster defines, a second
// Namespace, an APIService, cert-manager objects beside the webhooks'), it
// decides, and a warning names the file and says what it did;
// PackageOptions.Strict makes warnings errors. It refuses only output that
// would be wrong, such as a chart whose Helm release record would not fit
// its Secret in any layout (chart_record.go measures it and picks the
// layout). Each warning has a case in TestWarnings (or a test of its
// own), each refusal one in TestBadInputGivesClearErrors (or its own).
//
// Targets render a Project: each implements Target in a target_*.go file
// and registers itself, so a new output is a new file. The chart target
// (chart*.go, templater.go, values.go) and the bundle target (bundle.go,
// csv.go) are the two today. Package loads once, renders the selected
// targets side by side and writes through a temporary directory and an
// atomic rename, so a failure leaves earlier output as it was. The same
// input always gives byte-identical output.
package packaging
