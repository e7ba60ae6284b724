package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"opctl.dev/opctl/operators/sample/internal/instance"
)

// terminationMessage writes where Kubernetes reads a container's
// termination message (the backup's result, or why it failed):
// $TERMINATION_MESSAGE_PATH, for a container whose terminationMessagePath
// is not the default, else /dev/termination-log.
func terminationMessage(msg string) {
	path := os.Getenv("TERMINATION_MESSAGE_PATH")
	if path == "" {
		path = "/dev/termination-log"
	}
	_ = os.WriteFile(path, []byte(msg), 0o644)
}

// backup takes a snapshot of --addr into --dir: the body of a KVBackup's
// Job. The password is $VALKEY_PASSWORD.
func backup(args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	addr := fs.String("addr", "", "host:port of the server to snapshot")
	dir := fs.String("dir", "", "directory the snapshot is written to")
	name := fs.String("name", "", "name of the snapshot; the file is <name>.rdb")
	keep := fs.Int("keep", 0, "keep only the newest N snapshots of --dir (0 keeps all)")
	timeout := fs.Duration("timeout", 30*time.Minute, "bound on the whole backup")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || *dir == "" || *name == "" {
		return errors.New("--addr, --dir and --name are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	res, err := instance.Backup(ctx, instance.Target{Addr: *addr, Password: os.Getenv("VALKEY_PASSWORD")}, *dir, *name, *keep, *timeout)
	if err != nil {
		return err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	terminationMessage(string(out))
	return nil
}

// restore installs a snapshot into an empty data directory before the
// server starts: the body of a restoring store's init container. Only the
// pod named by --pod restores; the others replicate it.
func restore(args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	file := fs.String("file", "", "the snapshot")
	sum := fs.String("sha256", "", "its SHA-256, as the backup recorded it")
	dataDir := fs.String("data-dir", "/data", "the server's data directory")
	pod := fs.String("pod", "", "restore only in this pod ($HOSTNAME, which Kubernetes sets to the pod's name); empty restores in any")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || *sum == "" {
		return errors.New("--file and --sha256 are required")
	}
	host := os.Getenv("HOSTNAME")
	if host == "" {
		host, _ = os.Hostname()
	}
	if *pod != "" && host != *pod {
		fmt.Printf("not restoring in %s: %s restores and this pod replicates it\n", host, *pod)
		return nil
	}
	n, err := instance.Restore(*file, *sum, *dataDir)
	if errors.Is(err, instance.ErrDataPresent) {
		fmt.Println(err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("restored %s (%d bytes, sha256 verified) into %s\n", *file, n, *dataDir)
	return nil
}
