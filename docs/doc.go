// Package docs holds no code: its tests keep README.md and the guides in
// this folder true to the code.
//
// Markdown is read as a sequence of fenced blocks, inline code spans and
// links, each with the file and line it starts on. Three tests use them:
//
//   - TestRunnableBlocks runs every fenced block that the line
//     `<!-- runnable -->` precedes, with bash, in a scratch copy of the
//     repository and with a freshly built opctl first on PATH. The blocks of
//     one file run in order in one directory, so a later block may use what
//     an earlier one wrote. Tags after a colon ask for more:
//     `<!-- runnable: registry -->` starts a local OCI registry and sets
//     REGISTRY to its host:port; `<!-- runnable: cluster -->` sets KUBECONFIG
//     to the test control plane and skips, with a reason, where there is none
//     (make test-unit).
//   - TestCommandsExist checks every other opctl command line, in code
//     blocks and in inline code, against the cobra tree of internal/cli: the
//     subcommand path exists and every flag is defined on it (or inherited),
//     and none is deprecated. A failure names file:line.
//   - TestCLIReference checks the other way: every command of the tree,
//     and every flag of it (help and hidden flags aside), appears in the
//     synopsis of docs/cli.md.
//   - TestManifests checks every object the docs show (yaml blocks and
//     here-documents) whose kind is one of this repository's CRDs, as the
//     API server would on create: unknown fields, the schema, the CEL rules.
//     A yaml block that starts at `operators:` is a Tenant's spec.
//   - TestLinks checks that every relative link points at a file that
//     exists and, with a #fragment into Markdown, at a heading there.
package docs
