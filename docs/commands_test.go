package docs

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"opctl.dev/opctl/internal/cli"
)

// command is an opctl command line found in the docs: args follow "opctl".
type command struct {
	file string
	line int
	args string
}

var (
	// invocationRE finds opctl where a shell would run it.
	invocationRE = regexp.MustCompile(`(?:go run \./cmd/opctl|\bopctl)(?:\s|$)`)
	// shellEndRE ends a command in a shell block.
	shellEndRE = regexp.MustCompile(`\s#|;|&&|\|\||\s\|\s|\)|\s\d?>|<<|\|$`)
	// commandPositions are what may stand before a command on its line.
	commandPositions = []string{";", "&&", "||", "|", "$(", "(", "run:", "$", "!"}
)

// commands collects every opctl command of the docs: in code blocks (a
// runnable block is checked too; running it is stronger, but a flag in a
// branch not taken would escape) and in inline code that starts with it.
func commands(docs []doc) []command {
	var out []command
	for _, d := range docs {
		for _, b := range d.blocks {
			out = append(out, blockCommands(b)...)
		}
		for _, s := range d.code {
			if t := strings.TrimPrefix(s.text, "go run ./cmd/opctl"); t != s.text {
				out = append(out, command{s.file, s.line, strings.TrimSpace(t)})
			} else if strings.HasPrefix(s.text, "opctl ") {
				out = append(out, command{s.file, s.line, strings.TrimSpace(strings.TrimPrefix(s.text, "opctl"))})
			}
		}
	}
	return out
}

// blockCommands finds opctl at the start of a command in a block's logical
// lines. In a block without an info string (a synopsis), indented lines
// continue the command above them and "|" separates alternatives; in a
// shell block, a trailing backslash continues a line and "|", ";", "&&",
// comments and redirections end a command.
func blockCommands(b block) []command {
	if b.info == "go" {
		return nil
	}
	synopsis := b.info == ""
	var out []command
	lines := strings.Split(b.text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		for synopsis && i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") && invocationRE.MatchString(line) {
			i++
			line += " " + lines[i]
		}
		for _, m := range invocationRE.FindAllStringIndex(line, -1) {
			if !atCommandPosition(line[:m[0]]) {
				continue
			}
			rest := line[m[1]:]
			if !synopsis {
				if e := shellEndRE.FindStringIndex(rest); e != nil {
					rest = rest[:e[0]]
				}
			}
			out = append(out, command{b.file, b.line + 1 + start, strings.TrimSpace(rest)})
		}
	}
	return out
}

func atCommandPosition(before string) bool {
	before = strings.TrimSpace(before)
	if before == "" || strings.HasPrefix(before, "-") && strings.TrimLeft(before, "- ") == "run:" {
		return true
	}
	for _, p := range commandPositions {
		if strings.HasSuffix(before, p) {
			return true
		}
	}
	return false
}

// resolve finds the command that args name in root and checks its flags;
// it returns the command and the long names of the flags args use.
func resolve(root *cobra.Command, args string) (*cobra.Command, []string, error) {
	words := strings.Fields(args)
	cmd := root
	i := 0
	for ; i < len(words); i++ {
		w := strings.Trim(words[i], "[]")
		if strings.HasPrefix(w, "-") {
			break
		}
		next, err := child(cmd, w)
		if err != nil {
			return nil, nil, err
		}
		if next == nil {
			break
		}
		cmd = next
	}
	if !cmd.Runnable() && i < len(words) && !strings.HasPrefix(words[i], "-") && !strings.HasPrefix(words[i], "[") {
		return nil, nil, fmt.Errorf("%q has no subcommand %q (it has %s)", cmd.CommandPath(), words[i], names(cmd))
	}
	cmd.InitDefaultHelpFlag()
	var used []string
	var pieces []string
	for _, w := range words[i:] {
		pieces = append(pieces, strings.Split(w, "|")...) // [--insecure|--ca-file F]
	}
	for _, w := range pieces {
		w = strings.TrimLeft(w, "[")
		w = strings.TrimRight(w, "],)")
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			continue
		}
		name, _, _ := strings.Cut(w, "=")
		if long, ok := strings.CutPrefix(name, "--"); ok {
			if !validFlagName(long) {
				continue
			}
			fl := cmd.Flag(long)
			if fl == nil {
				return nil, nil, fmt.Errorf("%q has no flag --%s", cmd.CommandPath(), long)
			}
			if fl.Deprecated != "" {
				return nil, nil, fmt.Errorf("%q: --%s is deprecated: %s", cmd.CommandPath(), long, fl.Deprecated)
			}
			used = append(used, fl.Name)
			continue
		}
		short := strings.TrimPrefix(name, "-")
		if !validFlagName(short) || len(short) != 1 {
			continue // a value such as -1, or a word in a synopsis
		}
		fl := cmd.Flags().ShorthandLookup(short)
		if fl == nil {
			fl = cmd.InheritedFlags().ShorthandLookup(short)
		}
		if fl == nil {
			return nil, nil, fmt.Errorf("%q has no flag -%s", cmd.CommandPath(), short)
		}
		used = append(used, fl.Name)
	}
	return cmd, used, nil
}

var flagNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*$`)

func validFlagName(s string) bool { return flagNameRE.MatchString(s) }

// child returns cmd's subcommand w, or nil when w is an argument. "a|b"
// names alternatives, each of which must exist.
func child(cmd *cobra.Command, w string) (*cobra.Command, error) {
	alts := strings.Split(w, "|")
	var found *cobra.Command
	for _, a := range alts {
		var c *cobra.Command
		for _, sub := range cmd.Commands() {
			if sub.Name() == a || sub.HasAlias(a) {
				c = sub
			}
		}
		switch {
		case c == nil && len(alts) > 1:
			return nil, fmt.Errorf("%q has no subcommand %q (it has %s)", cmd.CommandPath(), a, names(cmd))
		case c == nil:
			return nil, nil
		}
		found = c
	}
	return found, nil
}

func names(cmd *cobra.Command) string {
	var n []string
	for _, c := range cmd.Commands() {
		n = append(n, c.Name())
	}
	return strings.Join(n, ", ")
}

// newCLI is the command tree opctl runs, with cobra's own help and
// completion commands, which it adds only on Execute.
func newCLI() *cobra.Command {
	root := cli.NewRootCommand(cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

func TestCommandsExist(t *testing.T) {
	docs, err := loadDocs()
	if err != nil {
		t.Fatal(err)
	}
	cmds := commands(docs)
	if len(cmds) < 20 {
		t.Fatalf("found %d opctl commands in the docs; the extraction is broken", len(cmds))
	}
	for _, c := range cmds {
		if _, _, err := resolve(newCLI(), c.args); err != nil {
			t.Errorf("%s:%d: opctl %s: %v", c.file, c.line, c.args, err)
		}
	}
}

// TestResolve shows that the check can fail: each wrong command is refused
// with the reason, each right one passes.
func TestResolve(t *testing.T) {
	tests := []struct {
		args, wantErr string
	}{
		{"package operators/sample --out out -o json", ""},
		{"tenancy run [--leader-elect | --shards [--ring tenancy]]", ""},
		{"completion bash|zsh", ""},
		{"validate PATH... [--kind auto|bundle] [-v 2]", ""},
		{"package --no-such-flag", `"opctl package" has no flag --no-such-flag`},
		{"tenancy run -x", `"opctl tenancy run" has no flag -x`},
		{"tenancy start", `"opctl tenancy" has no subcommand "start"`},
		{"completion bash|tcsh", `"opctl completion" has no subcommand "tcsh"`},
		{"publish out --registry=r --catalgo c", `"opctl publish" has no flag --catalgo`},
		{"publish [--insecure|--ca-file F]", ""},
		{"publish [--insecure|--cafile F]", `"opctl publish" has no flag --cafile`},
	}
	for _, tt := range tests {
		_, _, err := resolve(newCLI(), tt.args)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("opctl %s: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("opctl %s: error %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}

// TestBlockCommands pins where a command starts and ends in a block.
func TestBlockCommands(t *testing.T) {
	tests := []struct {
		name string
		b    block
		want []string
	}{
		{"shell, comment and pipe end it", block{info: "sh", text: "opctl package p --out o   # writes o\nopctl validate -o json o | jq .\nhelm install opctl charts/opctl"}, []string{"package p --out o", "validate -o json o"}},
		{"continued lines", block{info: "sh", text: "x=$(opctl version -o json) && opctl publish out \\\n  --registry r"}, []string{"version -o json", "publish out    --registry r"}},
		{"synopsis joins indented lines", block{text: "opctl tenancy run [--shards | --leader-elect]\n    [--max-history 5]\nopctl version"}, []string{"tenancy run [--shards | --leader-elect]     [--max-history 5]", "version"}},
		{"a CI step", block{info: "yaml", text: "- name: x\n  run: opctl validate -o sarif b"}, []string{"validate -o sarif b"}},
		{"go blocks are code, not commands", block{info: "go", text: "opctl package --x"}, nil},
		{"go run", block{info: "sh", text: "go run ./cmd/opctl package operators/sample   # main"}, []string{"package operators/sample"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range blockCommands(tt.b) {
				got = append(got, c.args)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("commands %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCLIReference holds docs/cli.md to the CLI: each command there, and
// every flag of it (help and hidden flags aside), is in its synopsis.
func TestCLIReference(t *testing.T) {
	const ref = "docs/cli.md"
	docs, err := loadDocs()
	if err != nil {
		t.Fatal(err)
	}
	var refDocs []doc
	for _, d := range docs {
		if d.path == filepath.FromSlash(ref) {
			refDocs = append(refDocs, doc{path: d.path, blocks: d.blocks})
		}
	}
	root := newCLI()
	documented := map[*cobra.Command]map[string]bool{}
	for _, c := range commands(refDocs) {
		cmd, used, err := resolve(root, c.args)
		if err != nil {
			continue // TestCommandsExist reports it
		}
		if documented[cmd] == nil {
			documented[cmd] = map[string]bool{}
		}
		for _, f := range used {
			documented[cmd][f] = true
		}
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if !cmd.Runnable() || cmd.Hidden || cmd.Name() == "help" || cmd.Parent() != nil && cmd.Parent().Name() == "completion" {
			return
		}
		flags, ok := documented[cmd]
		if !ok {
			t.Errorf("%s: no synopsis of %q", ref, cmd.CommandPath())
			return
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" || f.Deprecated != "" {
				return
			}
			if !flags[f.Name] {
				t.Errorf("%s: the synopsis of %q lacks --%s (%s)", ref, cmd.CommandPath(), f.Name, f.Usage)
			}
		})
	}
	walk(root)
}
