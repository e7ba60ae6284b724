// Command opctl packages, validates and publishes Kubernetes operators and
// runs the tenancy controller. The commands live in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"opctl.dev/opctl/internal/cli"
	"opctl.dev/opctl/internal/initgc"
)

func main() {
	initgc.Restore()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args[1:], initgc.Restore)
	stop()
	os.Exit(code)
}
