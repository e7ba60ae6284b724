package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"

	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/policy"
	"opctl.dev/opctl/pkg/validate"
)

func newTenancyCheckCommand(g *GlobalOptions) *cobra.Command {
	var (
		roleFiles          []string
		offline            bool
		profile, storageNS string
		configMap          string
		opts               validate.TenantOptions
	)
	cmd := &cobra.Command{
		Use:   "check PATH",
		Short: "Say, before any install, whether a chart, bundle or catalog package can run for a tenant and what would allow it",
		Long: `check judges the chart, bundle or catalog package at PATH the way the
tenancy controller would before installing it for a tenant: a Helm chart
(a directory or .tgz), a registry+v1 bundle (a directory with manifests/
and metadata/, as opctl package writes them) or the bundle of a
file-based catalog directory's package (--package; the channel head, or
--version). It judges the cluster-wide rules against the shipped baseline
and the platform's ClusterRoles; the Roles and RoleBindings in the
tenant's namespaces, with the controller's own code, against what the
tenant's owners hold there (the admin ClusterRole), the shipped baseline
and the operator's own kinds; CRDs that convert through a webhook; the
manager's watched namespaces, Pod Security restricted and the
cluster-scoped objects. A bundle is first
rendered as the controller's bundle backend renders it for a tenant of
--namespaces namespaces: its install modes must fit them, its
clusterPermissions on namespaced resources become Roles in the tenant's
namespaces and the rest cluster-wide rules, its webhooks are narrowed to
the tenant. It prints each refusal with its rule or object and the reason,
and a ClusterRole (YAML) that would allow the cluster-wide rules still
missing.

The platform's ClusterRoles are read from the cluster of --kubeconfig (the
ConfigMap charts/opctl's tenantClusterRoles value writes, and the
TenantProfile of --profile), and so are which resources are
cluster-scoped and the admin ClusterRole; with --offline, only
--cluster-role-file is read, the APIs opctl knows are cluster-scoped, and
admin is Kubernetes ` + policy.BuiltinKubernetes + `'s built-in role. Exit codes: 0 it fits, 1
something would be refused, 2 unusable input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(g.Output, FormatText, FormatJSON); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if opts.Namespaces < 1 {
				return &ExitError{Code: 2, Err: fmt.Errorf("--namespaces %d: a tenant has one namespace or more", opts.Namespaces)}
			}
			var roles []rbacv1.ClusterRole
			for _, f := range roleFiles {
				rs, err := readClusterRoles(f)
				if err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				roles = append(roles, rs...)
			}
			if !offline {
				rs, cl, err := platformClusterRoles(cmd, g, storageNS, configMap, profile)
				if err != nil {
					return &ExitError{Code: 2, Err: fmt.Errorf("%w (use --offline with --cluster-role-file to judge without a cluster)", err)}
				}
				roles, opts.Mapper, opts.Roles = append(roles, rs...), cl.RESTMapper(), &policy.ClusterRoles{Reader: cl}
			}
			v, err := validate.CheckTenant(cmd.Context(), args[0], roles, opts)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			if err := writeVerdict(cmd.OutOrStdout(), g.Output, v); err != nil {
				return err
			}
			if !v.Fits {
				return &ExitError{Code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&roleFiles, "cluster-role-file", nil, "YAML file of ClusterRoles the platform names for tenants (repeatable; several documents allowed)")
	f.BoolVar(&offline, "offline", false, "read no cluster: judge against the shipped baseline, --cluster-role-file and Kubernetes "+policy.BuiltinKubernetes+"'s built-in admin role only")
	f.StringVar(&profile, "profile", "", "TenantProfile whose spec.clusterRoles the tenant gets (read from the cluster)")
	f.StringVar(&storageNS, "storage-namespace", envOr("POD_NAMESPACE", tenancy.DefaultStorageNamespace), "the tenancy controller's namespace, holding the ConfigMap of --tenant-cluster-roles-configmap")
	f.StringVar(&configMap, "tenant-cluster-roles-configmap", "opctl-tenant-cluster-roles", "the ConfigMap of the platform's tenant ClusterRoles, as charts/opctl writes it")
	f.StringVar(&opts.Package, "package", "", "the package of the catalog directory to judge (catalogs only)")
	f.StringVar(&opts.Channel, "channel", "", "the channel of --package whose head is judged (default: the package's default channel)")
	f.StringVar(&opts.Version, "version", "", "the version of --package to judge instead of the channel head")
	f.IntVar(&opts.Namespaces, "namespaces", 1, "how many namespaces the tenant has (bundles: one needs the OwnNamespace install mode, more MultiNamespace)")
	return cmd
}

// readClusterRoles reads every ClusterRole of a YAML file.
func readClusterRoles(path string) ([]rbacv1.ClusterRole, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--cluster-role-file: %w", err)
	}
	var out []rbacv1.ClusterRole
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for i := 0; ; i++ {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if role.Kind == "" && role.Name == "" {
			continue // an empty document
		}
		if role.Kind != "ClusterRole" || role.Name == "" {
			return nil, fmt.Errorf("%s: document %d is a %q named %q: want a ClusterRole with a name", path, i+1, role.Kind, role.Name)
		}
		out = append(out, role)
	}
	return out, nil
}

// platformClusterRoles reads the ClusterRoles the platform names for
// tenants from the cluster: the tenancy controller's ConfigMap and the
// TenantProfile's, each ClusterRole as it is there; and returns the
// cluster's client, whose discovery says what is cluster-scoped and which
// reads the owners' admin role and the roles bindings name.
func platformClusterRoles(cmd *cobra.Command, g *GlobalOptions, ns, configMap, profile string) ([]rbacv1.ClusterRole, client.Client, error) {
	cfg, err := g.RESTConfig()
	if err != nil {
		return nil, nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: tenancy.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	ctx := cmd.Context()
	var names []string
	cm := &corev1.ConfigMap{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: configMap}, cm); client.IgnoreNotFound(err) != nil {
		return nil, nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ns, configMap, err)
	}
	names = append(names, tenancy.SplitClusterRoles(cm.Data[tenancy.ClusterRolesKey])...)
	if profile != "" {
		p := &tenancyv1.TenantProfile{}
		if err := cl.Get(ctx, client.ObjectKey{Name: profile}, p); err != nil {
			return nil, nil, fmt.Errorf("reading TenantProfile %s: %w", profile, err)
		}
		names = append(names, p.Spec.ClusterRoles...)
	}
	var out []rbacv1.ClusterRole
	for _, name := range names {
		role := &rbacv1.ClusterRole{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
			return nil, nil, fmt.Errorf("reading ClusterRole %s, which the platform names for tenants: %w", name, err)
		}
		out = append(out, *role)
	}
	return out, cl, nil
}

// writeVerdict prints v as text or JSON.
func writeVerdict(w io.Writer, format string, v *validate.TenantVerdict) error {
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	against := "the shipped baseline"
	if len(v.ClusterRoles) > 0 {
		against += " and ClusterRoles " + strings.Join(v.ClusterRoles, ", ")
	}
	against += "; Roles in its namespaces against " + v.OwnerRole
	what := v.Path
	switch {
	case v.Channel != "":
		what += " (package " + v.Package + ", channel " + v.Channel + ": bundle " + v.Bundle + ")"
	case v.Bundle != "":
		what += " (bundle " + v.Bundle + ")"
	}
	if v.Fits {
		_, err := fmt.Fprintf(w, "%s fits a tenant (judged against %s)\n", what, against)
		return err
	}
	fmt.Fprintf(w, "%s would be refused for a tenant (judged against %s):\n", what, against)
	for _, f := range v.Refusals {
		where := strings.TrimSpace(f.File + " " + f.Object)
		msg := f.Message
		if _, rest, ok := strings.Cut(msg, "): "); ok && strings.HasPrefix(msg, "for a tenant (") {
			msg = rest // the heading says what it was judged against
		}
		if f.Reason != "" {
			msg += " [" + f.Reason + "]"
		}
		fmt.Fprintf(w, "- %s: %s\n", where, msg)
	}
	if v.Allow == nil {
		return nil
	}
	b, err := sigsyaml.Marshal(v.Allow)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nThis ClusterRole allows the cluster-wide rules missing: name it in charts/opctl's tenantClusterRoles (every tenant) or a TenantProfile's spec.clusterRoles (bound to the controller too):\n---\n%s", b)
	return err
}
