package helmrelease

import (
	"bytes"
	"crypto/sha256"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// valueSchemas are charts' values schemas compiled, by content: Helm
// compiles a chart's schema again for every install and upgrade. A schema
// that does not compile here (one that loads a $ref over the network) is
// held as nil.
var valueSchemas = records.NewFIFO[[sha256.Size]byte, *jsonschema.Schema](16)

// valuesMeetSchema reports whether Helm's own schema validation of vals
// for chrt can be skipped: the chart has no schema, or vals, coalesced
// with the chart's defaults as Helm does, meet the compiled schema. It is
// false whenever Helm should decide, and Helm then validates (and words
// any error) itself: for a chart with dependencies, whose values Helm
// rewrites first, for a schema that does not compile here, and for values
// that fail.
func valuesMeetSchema(chrt *chart.Chart, vals map[string]any) bool {
	if chrt.Metadata == nil || chrt.Metadata.Dependencies != nil || len(chrt.Dependencies()) > 0 {
		return false
	}
	if chrt.Schema == nil {
		return true
	}
	schema, _ := valueSchemas.Get(sha256.Sum256(chrt.Schema), func() (*jsonschema.Schema, error) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(chrt.Schema))
		if err != nil {
			return nil, nil
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network $refs
		if err := c.AddResource("file:///values.schema.json", doc); err != nil {
			return nil, nil
		}
		s, _ := c.Compile("file:///values.schema.json")
		return s, nil
	})
	if schema == nil {
		return false
	}
	coalesced, err := chartutil.CoalesceValues(chrt, vals)
	return err == nil && schema.Validate(coalesced.AsMap()) == nil
}
