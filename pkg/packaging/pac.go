package packaging

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// PlatformAsCodePrefix prefixes the platform-as-code annotations on CRDs.
const PlatformAsCodePrefix = "platform-as-code/"

// pacKeys are the annotations whose value names the ConfigMap holding the
// figure under the same key.
var pacKeys = []string{"usage", "cpu-requests", "cpu-limits", "mem-requests", "mem-limits", "pdb-minavailable", "pdb-maxunavailable", "securitycontext", "serviceaccount"}

// PlatformAsCode is what one CRD declares about its operands.
type PlatformAsCode struct {
	// CRD is the CRD's name.
	CRD string
	// ConfigMap holds the figures; every annotation but composition names it.
	ConfigMap string
	// Annotations to set on the CRD.
	Annotations map[string]string
	// Figures are the ConfigMap's data, by annotation key.
	Figures map[string]string
}

// PlatformAsCode derives the annotations and figures of every CRD from the
// operands in opctl.yaml. Unknown figures are left out and reported in
// warnings; nothing is invented.
func (p *Project) PlatformAsCode() ([]PlatformAsCode, []string, error) {
	var out []PlatformAsCode
	var warnings []string
	for _, crd := range p.CRDs {
		op, ok := p.Config.Operands[crd.Name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("CRD %s: no operands.%s entry in %s, so no platform-as-code annotations", crd.Name, crd.Name, ConfigFile))
			continue
		}
		figures, err := operandFigures(crd.Name, op)
		if err != nil {
			return nil, nil, err
		}
		pac := PlatformAsCode{CRD: crd.Name, ConfigMap: crd.Name + "-platform-as-code", Annotations: map[string]string{}, Figures: figures}
		if len(op.Composition) > 0 {
			pac.Annotations[PlatformAsCodePrefix+"composition"] = strings.Join(op.Composition, ", ")
		}
		var missing []string
		for _, k := range pacKeys {
			if _, ok := figures[k]; ok {
				pac.Annotations[PlatformAsCodePrefix+k] = pac.ConfigMap
			} else if k != "pdb-minavailable" && k != "pdb-maxunavailable" {
				missing = append(missing, k)
			}
		}
		if figures["pdb-minavailable"] == "" && figures["pdb-maxunavailable"] == "" {
			missing = append(missing, "pdb-minavailable/pdb-maxunavailable")
		}
		if len(op.Composition) == 0 {
			missing = append(missing, "composition")
		}
		if len(missing) > 0 {
			warnings = append(warnings, fmt.Sprintf("CRD %s: %s unknown in %s, annotations left out", crd.Name, strings.Join(missing, ", "), ConfigFile))
		}
		out = append(out, pac)
	}
	return out, warnings, nil
}

// operandFigures computes the per-custom-resource figures: one replica's
// requests and limits times the default replicas.
func operandFigures(crd string, op Operand) (map[string]string, error) {
	f := map[string]string{}
	if op.Usage != "" {
		f["usage"] = op.Usage
	}
	replicas := int64(max(op.Replicas, 1))
	for _, q := range []struct{ key, kind, res string }{
		{"cpu-requests", "requests", "cpu"}, {"cpu-limits", "limits", "cpu"},
		{"mem-requests", "requests", "memory"}, {"mem-limits", "limits", "memory"},
	} {
		src := op.Resources.Requests
		if q.kind == "limits" {
			src = op.Resources.Limits
		}
		s, ok := src[q.res]
		if !ok {
			continue
		}
		v, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("%s: operands.%s.resources.%s.%s: %q is not a quantity (like 100m or 128Mi)", ConfigFile, crd, q.kind, q.res, s)
		}
		total := resource.NewMilliQuantity(v.MilliValue()*replicas, v.Format)
		f[q.key] = total.String()
	}
	for k, v := range op.PDB {
		switch strings.ToLower(k) {
		case "minavailable":
			f["pdb-minavailable"] = v
		case "maxunavailable":
			f["pdb-maxunavailable"] = v
		default:
			return nil, fmt.Errorf("%s: operands.%s.pdb.%s: use minAvailable or maxUnavailable", ConfigFile, crd, k)
		}
	}
	if len(op.SecurityContext) > 0 {
		b, err := json.Marshal(op.SecurityContext)
		if err != nil {
			return nil, err
		}
		f["securitycontext"] = string(b)
	}
	if op.ServiceAccount != "" {
		f["serviceaccount"] = op.ServiceAccount
	}
	if len(f) > 0 {
		f["replicas"] = fmt.Sprint(replicas)
	}
	return f, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
