package tenancy_test

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// benchProcesses names the processes whose CPU time the benchmarks
// account for, by /proc/<pid>/comm (at most 15 characters).
var benchProcesses = map[string]string{
	"kube-apiserver":  "kube-apiserver",
	"kube-controller": "kube-controller-manager",
	"kube-scheduler":  "kube-scheduler",
	"etcd":            "etcd",
	"kwok":            "kwok",
	"opctl":           "controller",
	"tenancy.test":    "benchmark",
}

// processCPU is the CPU time (user and system seconds) of the control
// plane, the controller and the benchmark itself so far.
func processCPU() map[string]float64 {
	out := map[string]float64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		if name, ok := benchProcesses[strings.TrimSpace(string(comm))]; ok {
			out[name] += cpuSeconds(pid)
		}
	}
	return out
}

// cpuSpent describes the CPU each process spent between two processCPU
// readings, against what the machine had in wall seconds.
func cpuSpent(before, after map[string]float64, wall float64) string {
	type spent struct {
		name string
		s    float64
	}
	var all []spent
	total := 0.0
	for name, s := range after {
		d := s - before[name] // a process started in between counts whole
		all = append(all, spent{name, d})
		total += d
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s > all[j].s })
	parts := make([]string, len(all))
	for i, p := range all {
		parts[i] = fmt.Sprintf("%s %.1f", p.name, p.s)
	}
	return fmt.Sprintf("%.1f s of %.1f s the %d cores had (%s)", total, wall*float64(runtime.NumCPU()), runtime.NumCPU(), strings.Join(parts, ", "))
}
