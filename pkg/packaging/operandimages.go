package packaging

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
)

// OperandImage is an image the manager passes to the pods it creates: an
// env var RELATED_IMAGE_<X> or <X>_IMAGE, or a flag --<x>image<y>=REF.
type OperandImage struct {
	// Key names it in relatedImages and in the chart's values.
	Key string
	// Image is the reference.
	Image string
	// Env is the variable that carries it, or Arg the index of the flag.
	Env string
	Arg int
	// Flag is the flag's "--name=" prefix.
	Flag string
}

// OperandImages finds the operand images of a container: env values
// whose name starts with RELATED_IMAGE_ or ends in _IMAGE, and args of
// the form --<something>image<something>=REF, whose value parses as an
// image reference.
func OperandImages(c corev1.Container) []OperandImage {
	var out []OperandImage
	for _, e := range c.Env {
		if e.Value == "" || !isImage(e.Value) {
			continue
		}
		if key, ok := strings.CutPrefix(e.Name, "RELATED_IMAGE_"); ok && key != "" {
			out = append(out, OperandImage{Key: imageName(key), Image: e.Value, Env: e.Name, Arg: -1})
		} else if key, ok := strings.CutSuffix(e.Name, "_IMAGE"); ok && key != "" {
			out = append(out, OperandImage{Key: imageName(key), Image: e.Value, Env: e.Name, Arg: -1})
		}
	}
	for i, a := range c.Args {
		flag, value, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(flag, "--") || !strings.Contains(strings.ToLower(flag), "image") || !isImage(value) {
			continue
		}
		key := strings.Trim(strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(flag, "--")), "image", ""), "-_")
		if key == "" {
			key = "image"
		}
		out = append(out, OperandImage{Key: imageName(key), Image: value, Arg: i, Flag: flag + "="})
	}
	return out
}

// isImage reports whether s parses as an image reference with a
// repository path (not a bare word such as "true" or "5", nor a file path
// such as /assets/loader.svg) for both go-containerregistry and the
// distribution reference parser OLM and container runtimes use.
func isImage(s string) bool {
	if strings.ContainsAny(s, " \t") || !strings.ContainsAny(s, "/:@") || !ValidImage(s) {
		return false
	}
	_, err := name.ParseReference(s)
	return err == nil
}
