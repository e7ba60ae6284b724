package registryv1

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// Bundle is what the controller needs of a catalog bundle: its CSV, the
// objects' analysis (CRDs, workloads, operands) and the APIs it owns.
type Bundle struct {
	CSVName, Version string
	InstallModes     map[operatorsv1alpha1.InstallModeType]bool
	// OwnedAPIs are "Kind.version.group", as OLM's olm.providedAPIs.
	OwnedAPIs []string
	Analysis  *quota.Analysis
	// ClusterPermissions are the rules of the CSV's clusterPermissions,
	// which OLM grants cluster-wide.
	ClusterPermissions []rbacv1.PolicyRule
}

// CatalogClient reads bundles from catalogs over operator-registry's gRPC
// API, as OLM does. Bundles are cached by catalog address and CSV name
// (a CSV name is one version of one package); channel heads and version
// lookups for a minute.
type CatalogClient struct {
	mu      sync.Mutex
	conns   map[string]*grpc.ClientConn
	bundles map[string]*Bundle
	lookups map[string]lookup
}

type lookup struct {
	csv string
	at  time.Time
}

const catalogLookupTTL = time.Minute

func NewCatalogClient() *CatalogClient {
	return &CatalogClient{conns: map[string]*grpc.ClientConn{}, bundles: map[string]*Bundle{}, lookups: map[string]lookup{}}
}

func (c *CatalogClient) registry(address string) (api.RegistryClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, ok := c.conns[address]
	if !ok {
		var err error
		if conn, err = grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", address, err)
		}
		c.conns[address] = conn
	}
	return api.NewRegistryClient(conn), nil
}

// CSVFor returns the CSV name of version in the package's channel, or the
// channel head when version is empty.
func (c *CatalogClient) CSVFor(ctx context.Context, address, pkg, channel, version string) (string, error) {
	key := address + "|" + pkg + "|" + channel + "|" + version
	c.mu.Lock()
	l, ok := c.lookups[key]
	c.mu.Unlock()
	if ok && time.Since(l.at) < catalogLookupTTL {
		return l.csv, nil
	}
	reg, err := c.registry(address)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	csv := ""
	if version == "" {
		p, err := reg.GetPackage(ctx, &api.GetPackageRequest{Name: pkg})
		if err != nil {
			return "", fmt.Errorf("catalog %s: package %s: %w", address, pkg, err)
		}
		for _, ch := range p.Channels {
			if ch.Name == channel {
				csv = ch.CsvName
			}
		}
		if csv == "" {
			return "", fmt.Errorf("catalog %s: package %s has no channel %s", address, pkg, channel)
		}
	} else {
		cfg, err := c.listing(ctx, address)
		if err != nil {
			return "", fmt.Errorf("catalog %s: %w", address, err)
		}
		r, err := ResolveBundle(cfg, ResolveInput{Pkg: pkg, Channel: channel, Pinned: version})
		if err != nil {
			return "", fmt.Errorf("catalog %s: %w", address, err)
		}
		csv = r.Bundle.Name
	}
	c.mu.Lock()
	c.lookups[key] = lookup{csv: csv, at: time.Now()}
	c.mu.Unlock()
	return csv, nil
}

// Bundle returns a catalog bundle, read once.
func (c *CatalogClient) Bundle(ctx context.Context, address, pkg, channel, csv string) (*Bundle, error) {
	key := address + "|" + csv
	c.mu.Lock()
	b, ok := c.bundles[key]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	reg, err := c.registry(address)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ab, err := reg.GetBundle(ctx, &api.GetBundleRequest{PkgName: pkg, ChannelName: channel, CsvName: csv})
	if err != nil {
		return nil, fmt.Errorf("catalog %s: bundle %s: %w", address, csv, err)
	}
	if b, err = readBundle(ab); err != nil {
		return nil, fmt.Errorf("catalog %s: bundle %s: %w", address, csv, err)
	}
	c.mu.Lock()
	c.bundles[key] = b
	c.mu.Unlock()
	return b, nil
}

// Forget drops a cached bundle, which a catalog served differently since.
func (c *CatalogClient) Forget(address, csv string) {
	c.mu.Lock()
	delete(c.bundles, address+"|"+csv)
	c.mu.Unlock()
}

// readBundle analyses a bundle's objects as a rendered chart is analysed:
// its CRDs and ConfigMaps as they are, and the CSV's deployments as
// Deployments.
func readBundle(ab *api.Bundle) (*Bundle, error) {
	if len(ab.Object) == 0 {
		return nil, fmt.Errorf("the catalog serves no objects of it (the quota needs its CRDs and CSV): render the catalog with its bundle objects (opctl publish does)")
	}
	all, err := ReadDocs(ab.CsvName, ab.Object)
	if err != nil {
		return nil, err
	}
	split, err := splitBundle(all)
	if err != nil {
		return nil, err
	}
	csv, objs := split.csv, append(split.crds, split.others...)
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		dep := &appsv1.Deployment{Spec: d.Spec}
		dep.Name = d.Name
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetKind("Deployment")
		objs = append(objs, obj)
	}
	a, err := quota.Analyze(objs)
	if err != nil {
		return nil, err
	}
	b := &Bundle{CSVName: csv.Name, Version: csv.Spec.Version.String(), Analysis: a, InstallModes: split.installModes}
	// What OLM makes of the CSV's permissions in the namespace: a Role and
	// a RoleBinding each, and their ServiceAccounts.
	accounts := map[string]bool{}
	install := csv.Spec.InstallStrategy.StrategySpec
	for _, p := range install.Permissions {
		quota.ObjectCounts(a.Counts, schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, 1)
		quota.ObjectCounts(a.Counts, schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}, 1)
		accounts[p.ServiceAccountName] = true
	}
	for _, p := range install.ClusterPermissions {
		accounts[p.ServiceAccountName] = true
	}
	quota.ObjectCounts(a.Counts, schema.GroupKind{Kind: "ServiceAccount"}, int64(len(accounts)))
	for _, p := range csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions {
		b.ClusterPermissions = append(b.ClusterPermissions, p.Rules...)
	}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		b.OwnedAPIs = append(b.OwnedAPIs, o.Kind+"."+o.Version+"."+groupOf(o.Name))
	}
	return b, nil
}

// groupOf is the group of a CRD name (<plural>.<group>).
func groupOf(crdName string) string {
	_, group, _ := strings.Cut(crdName, ".")
	return group
}

// listing lists an operator-registry server's bundles as a file-based
// catalog: its packages, channels with their upgrade edges, and bundles
// with their version, image and objects.
func (c *CatalogClient) listing(ctx context.Context, address string) (*declcfg.DeclarativeConfig, error) {
	reg, err := c.registry(address)
	if err != nil {
		return nil, err
	}
	stream, err := reg.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing bundles: %w", err)
	}
	cfg := &declcfg.DeclarativeConfig{}
	packages, channels, bundles := map[string]bool{}, map[string]int{}, map[string]bool{}
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("listing bundles: %w", err)
		}
		if !packages[b.PackageName] {
			packages[b.PackageName] = true
			cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: b.PackageName})
		}
		key := b.PackageName + "/" + b.ChannelName
		i, ok := channels[key]
		if !ok {
			i = len(cfg.Channels)
			channels[key] = i
			cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: b.PackageName, Name: b.ChannelName})
		}
		cfg.Channels[i].Entries = append(cfg.Channels[i].Entries, declcfg.ChannelEntry{Name: b.CsvName, Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange})
		if bundles[b.CsvName] {
			continue
		}
		bundles[b.CsvName] = true
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: b.CsvName, Package: b.PackageName, Image: b.BundlePath,
			Properties: []property.Property{property.MustBuildPackage(b.PackageName, b.Version)}, Objects: b.Object})
	}
	return cfg, nil
}
