package testcatalog

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/cache"
	"github.com/operator-framework/operator-registry/pkg/server"
	"google.golang.org/grpc"
	health "google.golang.org/grpc/health/grpc_health_v1"
)

// Serve loads the file-based catalog in dir and serves it on 127.0.0.1
// until the test ends. It returns the address (host:port).
func Serve(t testing.TB, dir string) string {
	t.Helper()
	addr, stop, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// Start serves the catalog in dir on a free loopback port and returns its
// address and a function that stops the server.
func Start(dir string) (string, func(), error) {
	cacheDir, err := os.MkdirTemp("", "opctl-catalog-cache-")
	if err != nil {
		return "", nil, err
	}
	store, err := cache.New(cacheDir, cache.WithFormat(cache.FormatJSON))
	if err == nil {
		err = cache.LoadOrRebuild(context.Background(), store, os.DirFS(dir))
	}
	if err != nil {
		os.RemoveAll(cacheDir)
		return "", nil, fmt.Errorf("loading catalog %s: %w", dir, err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.Close()
		os.RemoveAll(cacheDir)
		return "", nil, err
	}
	s := grpc.NewServer()
	api.RegisterRegistryServer(s, server.NewRegistryServer(store))
	health.RegisterHealthServer(s, server.NewHealthServer())
	go func() { _ = s.Serve(lis) }()
	return lis.Addr().String(), func() {
		s.Stop()
		store.Close()
		os.RemoveAll(cacheDir)
	}, nil
}
