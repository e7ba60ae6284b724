package packaging

import (
	"fmt"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation"
)

// dropBaseTemplates leaves out the base CSV's fields that hold a value the
// project's release step fills in (MIN_KUBE_VERSION, <OLD_BUNDLE_VERSION>),
// which the API server or OLM would refuse, and returns a warning for each
// naming the file, field and value and where to set it instead. opctl.yaml's
// own values are checked by Config.check and stay errors.
func dropBaseTemplates(path string, c *Config) []string {
	var warnings []string
	drop := func(key, value, want string) {
		warnings = append(warnings, fmt.Sprintf("%s: spec.%s %q is not %s and was left out (a value the release step fills in?); set %s in %s to carry one", path, key, value, want, key, ConfigFile))
	}
	if v := c.MinKubeVersion; v != "" {
		if _, err := semver.Parse(v); err != nil {
			drop("minKubeVersion", v, "SemVer (like 1.30.0)")
			c.MinKubeVersion = ""
		}
	}
	if v := c.Replaces; v != "" && len(validation.IsDNS1123Subdomain(v)) > 0 {
		drop("replaces", v, "a CSV name")
		c.Replaces = ""
	}
	var skips []string
	for _, v := range c.Skips {
		if len(validation.IsDNS1123Subdomain(v)) > 0 {
			drop("skips", v, "a CSV name")
			continue
		}
		skips = append(skips, v)
	}
	c.Skips = skips
	return warnings
}
