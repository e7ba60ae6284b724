package packaging

// bundleTarget writes the OLM registry+v1 bundle under bundle/<name>.
type bundleTarget struct{}

func init() { RegisterTarget(bundleTarget{}) }

func (bundleTarget) Name() string { return "bundle" }

func (bundleTarget) Render(p *Project, opts PackageOptions) (Files, []string, error) {
	return p.Bundle(opts.Bundle)
}
