package packaging

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"opctl.dev/opctl/pkg/pac"
)

// PlatformAsCodePrefix prefixes the platform-as-code annotations on CRDs.
const PlatformAsCodePrefix = pac.Prefix

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
		f, err := operandFigures(crd.Name, op)
		if err != nil {
			return nil, nil, err
		}
		figures := f.Data()
		pc := PlatformAsCode{CRD: crd.Name, ConfigMap: pac.ConfigMapName(crd.Name),
			Annotations: f.Annotations(pac.ConfigMapName(crd.Name), strings.Join(op.Composition, ", ")), Figures: figures}
		var missing []string
		for _, k := range pac.AnnotatedKeys {
			if _, ok := figures[k]; !ok && k != pac.PDBMinAvailable && k != pac.PDBMaxUnavailable {
				missing = append(missing, k)
			}
		}
		if figures[pac.PDBMinAvailable] == "" && figures[pac.PDBMaxUnavailable] == "" {
			missing = append(missing, "pdb-minavailable/pdb-maxunavailable")
		}
		if len(op.Composition) == 0 {
			missing = append(missing, "composition")
		}
		if len(missing) > 0 {
			warnings = append(warnings, fmt.Sprintf("CRD %s: %s unknown in %s, annotations left out", crd.Name, strings.Join(missing, ", "), ConfigFile))
		}
		out = append(out, pc)
	}
	return out, warnings, nil
}

// operandFigures reads an operand of opctl.yaml into the contract's
// per-pod figures: one replica's requests and limits, the replicas of one
// custom resource, and each replica's volumes.
func operandFigures(crd string, op Operand) (pac.Figures, error) {
	f := pac.Figures{Usage: op.Usage, Replicas: int64(max(op.Replicas, 1)), Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{},
		ServiceAccount: op.ServiceAccount}
	for _, kr := range []struct {
		kind string
		src  map[string]string
	}{{"requests", op.Resources.Requests}, {"limits", op.Resources.Limits}} {
		kind, src := kr.kind, kr.src
		for _, res := range slices.Sorted(maps.Keys(src)) {
			v, err := pac.ParseQuantity(src[res])
			if err != nil {
				return f, fmt.Errorf("%s: operands.%s.resources.%s.%s %q: %w", ConfigFile, crd, kind, res, src[res], err)
			}
			switch {
			case res == "cpu" || res == "memory":
				if kind == "requests" {
					f.Requests[corev1.ResourceName(res)] = v
				} else {
					f.Limits[corev1.ResourceName(res)] = v
				}
			case res == "storage" && kind == "requests":
				f.Storage = &v
				f.PVCsPerReplica = int64(max(op.PVCsPerReplica, 1))
			default:
				return f, fmt.Errorf("%s: operands.%s.resources.%s.%s: use cpu and memory (and storage under requests)", ConfigFile, crd, kind, res)
			}
		}
	}
	if op.PVCsPerReplica != 0 && f.Storage == nil {
		return f, fmt.Errorf("%s: operands.%s.pvcsPerReplica: set resources.requests.storage, the size of one volume, too", ConfigFile, crd)
	}
	for k, v := range op.PDB {
		switch strings.ToLower(k) {
		case "minavailable":
			f.PDBMinAvailable = v
		case "maxunavailable":
			f.PDBMaxUnavailable = v
		default:
			return f, fmt.Errorf("%s: operands.%s.pdb.%s: use minAvailable or maxUnavailable", ConfigFile, crd, k)
		}
	}
	if len(op.SecurityContext) > 0 {
		b, err := json.Marshal(op.SecurityContext)
		if err != nil {
			return f, err
		}
		f.SecurityContext = string(b)
	}
	return f, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
