package packaging

import "github.com/spf13/pflag"

// chartsDir receives the chart target's output: charts/<name>.
const chartsDir = "charts"

// chartTarget writes the Helm chart under charts/<name>.
type chartTarget struct{}

func init() { RegisterTarget(chartTarget{}) }

func (chartTarget) Name() string              { return "chart" }
func (chartTarget) Description() string       { return "the Helm chart" }
func (chartTarget) Dir() string               { return chartsDir }
func (chartTarget) NewOptions() TargetOptions { return &ChartOptions{} }

func (chartTarget) Render(p *Project, opts TargetOptions) (Files, []string, error) {
	return p.Chart(*opts.(*ChartOptions))
}

// AddFlags binds the chart's options to flags of opctl package.
func (o *ChartOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.CRDs, "crds", "", "CRDs in the chart: templated, separate-chart or crds-dir (default templated, or separate-chart when the release record would not fit Helm's 1 MiB Secret)")
	f.StringVar(&o.RBACScope, "rbac-scope", "", "default rbac.scope of the chart: namespace or cluster (default namespace, or cluster for a manager that reads no watch-namespace setting)")
}
