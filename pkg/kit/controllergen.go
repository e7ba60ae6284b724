package kit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/rbac"
)

// emptyRole is config/rbac/role.yaml of a project with no kind yet, which
// controller-gen would not write.
const emptyRole = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules: []
`

// controllerGen runs controller-tools in process, as make generate runs
// controller-gen: the deepcopy code of the API packages, the CRDs into
// config/crd/bases and the manager's role into config/rbac.
func controllerGen(dir string, p *Project) error {
	if len(p.Kinds) == 0 {
		return os.WriteFile(filepath.Join(dir, "config", "rbac", "role.yaml"), []byte(emptyRole), 0o644)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	gens := genall.Generators{}
	for _, g := range []genall.Generator{deepcopy.Generator{}, crd.Generator{}, rbac.Generator{RoleName: "manager-role"}} {
		gens = append(gens, &g)
	}
	rt, err := gens.ForRootsWithConfig(&packages.Config{Dir: abs}, "./api/...", "./internal/controller/...")
	if err != nil {
		return fmt.Errorf("loading the project's packages: %w", err)
	}
	rt.OutputRules = genall.OutputRules{
		Default: genall.OutputToNothing,
		ByGenerator: map[*genall.Generator]genall.OutputRule{
			gens[0]: genall.OutputArtifacts{},
			gens[1]: genall.OutputArtifacts{Config: genall.OutputToDirectory(filepath.Join(abs, "config", "crd", "bases"))},
			gens[2]: genall.OutputArtifacts{Config: genall.OutputToDirectory(filepath.Join(abs, "config", "rbac"))},
		},
	}
	var errs bytes.Buffer
	rt.ErrorWriter = &errs
	if rt.Run() {
		return fmt.Errorf("controller-gen: %s", strings.TrimSpace(errs.String()))
	}
	return nil
}
