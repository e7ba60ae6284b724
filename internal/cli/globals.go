package cli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// GlobalOptions are the flags every opctl command accepts.
type GlobalOptions struct {
	Kubeconfig string
	Context    string
	Namespace  string
	Verbosity  int
	Output     string

	log logr.Logger
}

// AddFlags registers the global flags on fs.
func (g *GlobalOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&g.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&g.Context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVarP(&g.Namespace, "namespace", "n", "", "namespace to work in (default: the context's namespace)")
	fs.IntVarP(&g.Verbosity, "verbosity", "v", 0, "log level: 0 warnings and errors, 1 info, 2 and above debug")
	fs.StringVarP(&g.Output, "output", "o", "text", "output format; each command lists the formats it supports")
}

// complete validates the global flags and sets up logging.
func (g *GlobalOptions) complete(_ *cobra.Command) error {
	if g.Verbosity < 0 {
		return fmt.Errorf("invalid --verbosity %d: must be 0 or more", g.Verbosity)
	}
	level := slog.LevelWarn - slog.Level(4*g.Verbosity)
	g.log = logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	klog.SetLogger(g.log.WithName("client-go"))
	// operator-registry logs through logrus; follow -v there too.
	logrus.SetLevel(logrus.Level(min(int(logrus.WarnLevel)+g.Verbosity, int(logrus.TraceLevel))))
	return nil
}

// Logger returns the logger configured from -v.
func (g *GlobalOptions) Logger() logr.Logger { return g.log }

func (g *GlobalOptions) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: g.Context}
	overrides.Context.Namespace = g.Namespace
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// RESTConfig returns the client configuration selected by --kubeconfig and
// --context.
func (g *GlobalOptions) RESTConfig() (*rest.Config, error) {
	cfg, err := g.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return cfg, nil
}

// ResolvedNamespace returns -n if given, else the context's namespace, else
// "default".
func (g *GlobalOptions) ResolvedNamespace() (string, error) {
	ns, _, err := g.clientConfig().Namespace()
	if err != nil {
		return "", fmt.Errorf("resolving namespace: %w", err)
	}
	return ns, nil
}
