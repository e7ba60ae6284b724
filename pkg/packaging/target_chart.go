package packaging

// chartTarget writes the Helm chart under charts/<name>.
type chartTarget struct{}

func init() { RegisterTarget(chartTarget{}) }

func (chartTarget) Name() string { return "chart" }

func (chartTarget) Render(p *Project, opts PackageOptions) (Files, []string, error) {
	return p.Chart(opts.Chart)
}
