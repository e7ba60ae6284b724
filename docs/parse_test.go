package docs

import (
	"reflect"
	"testing"
)

// TestParse pins what the other tests rely on: markers and their tags,
// fences, inline code across lines, links outside code, heading anchors.
func TestParse(t *testing.T) {
	md := "# The `opctl` CLI\n" +
		"\n" +
		"See [guide](docs/a.md#one-two) and `opctl tenancy run\n  --shards`; not `[x](y.md)`.\n" +
		"\n" +
		"<!-- runnable: registry, cluster -->\n" +
		"```sh\n" +
		"opctl version\n" +
		"# not a heading\n" +
		"```\n" +
		"\n" +
		"```\n" +
		"opctl package\n" +
		"```\n" +
		"## One, two!\n"
	d, err := parse("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(d.blocks))
	}
	b := d.blocks[0]
	if !b.runnable || b.line != 7 || b.info != "sh" || b.text != "opctl version\n# not a heading" || !reflect.DeepEqual(b.tags, []string{"registry", "cluster"}) {
		t.Errorf("runnable block %+v", b)
	}
	if d.blocks[1].runnable || d.blocks[1].line != 12 {
		t.Errorf("plain block %+v: should not be runnable, at line 12", d.blocks[1])
	}
	if want := []span{{"x.md", 1, "opctl"}, {"x.md", 3, "opctl tenancy run --shards"}, {"x.md", 4, "[x](y.md)"}}; !reflect.DeepEqual(d.code, want) {
		t.Errorf("inline code %+v, want %+v", d.code, want)
	}
	if want := []span{{"x.md", 3, "docs/a.md#one-two"}}; !reflect.DeepEqual(d.links, want) {
		t.Errorf("links %+v, want %+v", d.links, want)
	}
	if want := map[string]bool{"the-opctl-cli": true, "one-two": true}; !reflect.DeepEqual(d.anchors, want) {
		t.Errorf("anchors %v, want %v", d.anchors, want)
	}
	if _, err := parse("y.md", "```sh\nopctl version\n"); err == nil {
		t.Error("an unclosed block parsed without error")
	}
}
