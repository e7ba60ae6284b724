package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// extraTemplates copies the project's extraTemplates into the chart's
// templates/, named extra-<base name>. A path outside the project, a file
// that cannot be read or two files of one base name are errors naming
// the field.
func (p *Project) extraTemplates(files Files, dir string) error {
	seen := map[string]string{}
	for _, rel := range p.Config.ExtraTemplates {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s: extraTemplates entry %q is outside the project: name a file under %s", ConfigFile, rel, p.Dir)
		}
		base := filepath.Base(clean)
		if prev, dup := seen[base]; dup {
			return fmt.Errorf("%s: extraTemplates entries %q and %q share the name %s: rename one", ConfigFile, prev, rel, base)
		}
		seen[base] = rel
		b, err := os.ReadFile(filepath.Join(p.Dir, clean))
		if err != nil {
			return fmt.Errorf("%s: extraTemplates entry %q: %w", ConfigFile, rel, err)
		}
		files[dir+"templates/extra-"+base] = b
	}
	return nil
}
