package packaging

import (
	"fmt"
	"strings"
)

// operatorHubGaps lists the opctl.yaml keys whose absence the OperatorHub
// validator (operator-framework's OperatorHubV2) reports, as one warning,
// or none when nothing is missing.
func operatorHubGaps(cfg Config, icon bool) []string {
	var missing []string
	if cfg.Provider.Name == "" {
		missing = append(missing, "provider.name (an error for the validator)")
	}
	if !icon {
		missing = append(missing, "icon (a warning)")
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the OperatorHub validator will report what %s does not set: %s; set them there to publish on OperatorHub",
		ConfigFile, strings.Join(missing, ", "))}
}
