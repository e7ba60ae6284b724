package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Output formats understood by -o. Commands accept a subset.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// checkFormat returns an error naming the accepted formats when format is
// not one of them.
func checkFormat(format string, accepted ...string) error {
	if slices.Contains(accepted, format) {
		return nil
	}
	return fmt.Errorf("unsupported --output %q: use one of %s", format, strings.Join(accepted, ", "))
}

// printStructured writes v as indented JSON or as YAML.
func printStructured(w io.Writer, format string, v any) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("printStructured: format %q is not structured", format)
}

// dirArg returns the optional directory argument, default ".".
func dirArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}
