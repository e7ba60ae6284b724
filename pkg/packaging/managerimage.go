package packaging

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// ManagerSource is what building the manager's image needs of a project.
type ManagerSource struct {
	// Dir is the project; Main the manager's main package relative to it
	// ("" when none was found) and MainFrom how it was found.
	Dir, Main, MainFrom string
	// Image is the manager's image as the overlay names it; Command its
	// container's command (the program's path in the image).
	Image   string
	Command []string
	// Name and Version are the package's; Source its source link
	// (opctl.yaml's link named Source), if any.
	Name, Version, Source string
}

// ImageBuilder builds the manager's image from its source. The reference
// it returns (repository@digest) replaces the manager's image everywhere
// the package names it: the chart's values, the CSV and relatedImages.
type ImageBuilder interface {
	BuildManager(ctx context.Context, src ManagerSource) (string, error)
}

// managerSource says where the manager's program comes from.
func (p *Project) managerSource() ManagerSource {
	c := managerContainer(p.Manager)
	src := ManagerSource{Dir: p.Dir, Main: p.Watch.Main, MainFrom: p.Watch.How, Image: c.Image, Command: c.Command,
		Name: p.Name, Version: p.Version}
	if src.Main == "" { // detection did not run (helm or ansible layouts)
		src.Main, src.MainFrom = p.mainPackage(loadDockerfile(p.Dir), findModule(p.Dir))
	}
	for _, l := range p.Config.Links {
		if strings.EqualFold(l.Name, "source") {
			src.Source = l.URL
		}
	}
	return src
}

// buildManager builds the manager's image with b and points the package
// at it.
func (p *Project) buildManager(ctx context.Context, b ImageBuilder, progress io.Writer) error {
	src := p.managerSource()
	ref, err := b.BuildManager(ctx, src)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "the manager's image %s is now %s\n", src.Image, ref)
	return p.replaceImages(map[string]string{src.Image: ref})
}

// replaceImages replaces images, by exact reference, wherever the package
// names them (the manager, its operand flags and env, extra objects and
// samples).
func (p *Project) replaceImages(m map[string]string) error {
	replaceStrings(p.managerRaw.Object, m)
	for _, o := range p.Objects {
		replaceStrings(o.Object, m)
	}
	for _, s := range p.Samples {
		replaceStrings(s.Object, m)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(p.managerRaw.Object, p.Manager)
}
