package testcluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// podInitEnv, in a test binary's environment, names the podSpec file of a
// pod to run: the binary is then the first process of that pod's mount
// and network namespaces (RunDeployment) and runs podInit, not the tests.
const podInitEnv = "OPCTL_TESTCLUSTER_POD"

func init() {
	if spec := os.Getenv(podInitEnv); spec != "" {
		code, err := podInit(spec)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pod init: %v\n", err)
			code = 127
		}
		os.Exit(code)
	}
}

// podSpec is what podInit needs, written by RunDeployment.
type podSpec struct {
	// Bin, Args and Env are the container's process.
	Bin  string   `json:"bin"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	// Mounts are bind mounts, target path by source directory or file.
	Mounts []podMount `json:"mounts"`
	// APIPort is the loopback port of the API server inside the pod, and
	// APISocket the Unix socket the test relays it through.
	APIPort   int    `json:"apiPort"`
	APISocket string `json:"apiSocket"`
	// Ports are the container's ports the test reaches through the
	// Unix socket PortSocket(port) of SocketDir.
	Ports     []int  `json:"ports"`
	SocketDir string `json:"socketDir"`
	// Relays are further loopback ports inside the pod, each relayed
	// through a Unix socket to an address outside (RelayPort).
	Relays []podRelay `json:"relays,omitempty"`
	// Hosts is the pod's /etc/hosts; Hostname its host name, the pod's
	// name as the kubelet sets it (controller-runtime names a leader
	// election's holder by it).
	Hosts    string `json:"hosts"`
	Hostname string `json:"hostname"`
}

type podRelay struct {
	Address string `json:"address"`
	Socket  string `json:"socket"`
}

type podMount struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// podInit runs in the new namespaces: it makes the mounts private and
// binds the pod's files where the container finds them, brings up the
// loopback, relays the API server's port in and the container's ports out,
// runs the container's process with its signals forwarded, and returns
// its exit status.
func podInit(specPath string) (int, error) {
	b, err := os.ReadFile(specPath)
	if err != nil {
		return 0, err
	}
	var spec podSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return 0, fmt.Errorf("reading %s: %w", specPath, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0, fmt.Errorf("making mounts private: %w", err)
	}
	// /run (/var/run) gets a fresh tmpfs: the ServiceAccount's files go
	// there without touching the host's.
	if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"); err != nil {
		return 0, fmt.Errorf("mounting /run: %w", err)
	}
	if err := stageHostPaths(&spec); err != nil {
		return 0, err
	}
	hosts := filepath.Join(stagedDir, "hosts")
	if err := os.WriteFile(hosts, []byte(spec.Hosts), 0o644); err != nil {
		return 0, err
	}
	spec.Mounts = append(spec.Mounts, podMount{Source: hosts, Target: "/etc/hosts"})
	for _, m := range spec.Mounts {
		if err := bindMount(m.Source, m.Target); err != nil {
			return 0, err
		}
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return 0, fmt.Errorf("setting the host name %q: %w", spec.Hostname, err)
	}
	if err := loopbackUp(); err != nil {
		return 0, err
	}
	if err := relay(fmt.Sprintf("127.0.0.1:%d", spec.APIPort), "tcp", "unix", spec.APISocket); err != nil {
		return 0, err
	}
	for _, r := range spec.Relays {
		if err := relay(r.Address, "tcp", "unix", r.Socket); err != nil {
			return 0, err
		}
	}
	for _, p := range spec.Ports {
		if err := relay(filepath.Join(spec.SocketDir, PortSocket(p)), "unix", "tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
			return 0, err
		}
	}
	cmd := exec.Command(spec.Bin, spec.Args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = spec.Env, os.Stdout, os.Stderr
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", spec.Bin, err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), nil
	}
	return 0, err
}

// stagedDir is where podInit binds what it needs of the host before the
// pod's volumes are mounted: a volume on /tmp (an emptyDir, as restricted
// pods have) would hide the host's temporary directories, where the
// program, the sockets and the volumes' sources are.
const stagedDir = "/run/.opctl-pod"

// stageHostPaths binds the program, the socket directory and each mount's
// source under stagedDir and points spec at the staged paths.
func stageHostPaths(spec *podSpec) error {
	n := 0
	stage := func(p string) (string, error) {
		n++
		to := filepath.Join(stagedDir, strconv.Itoa(n), filepath.Base(p))
		if err := bindMount(p, to); err != nil {
			return "", err
		}
		return to, nil
	}
	var err error
	if spec.Bin, err = stage(spec.Bin); err != nil {
		return err
	}
	sockets, err := stage(spec.SocketDir)
	if err != nil {
		return err
	}
	moved := func(p string) string {
		if rel, err := filepath.Rel(spec.SocketDir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(sockets, rel)
		}
		return p
	}
	spec.APISocket = moved(spec.APISocket)
	for i := range spec.Relays {
		spec.Relays[i].Socket = moved(spec.Relays[i].Socket)
	}
	spec.SocketDir = sockets
	for i := range spec.Mounts {
		if spec.Mounts[i].Source, err = stage(spec.Mounts[i].Source); err != nil {
			return err
		}
	}
	return nil
}

// bindMount binds source over target, creating target (a directory, or
// an empty file for a file) where it is missing.
func bindMount(source, target string) error {
	fi, err := os.Stat(source)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else if _, statErr := os.Stat(target); os.IsNotExist(statErr) {
		if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
			err = os.WriteFile(target, nil, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("preparing mount point %s: %w", target, err)
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s to %s: %w", source, target, err)
	}
	return nil
}

// loopbackUp brings up lo, the new network namespace's only interface.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	return nil
}

// relay listens on network/address and copies each connection both ways
// to a new connection to toNetwork/toAddress, until the process ends.
func relay(address, network, toNetwork, toAddress string) error {
	if network == "unix" {
		_ = os.Remove(address)
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", address, err)
	}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go pipe(in, toNetwork, toAddress)
		}
	}()
	return nil
}

// PortSocket is the name of the Unix socket that reaches a pod's port.
func PortSocket(port int) string { return "port-" + strconv.Itoa(port) + ".sock" }
