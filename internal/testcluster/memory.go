package testcluster

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemoryReport is the peak resident set size (VmHWM) of each component.
type MemoryReport struct {
	Components []ComponentMemory
}

// ComponentMemory is one component's peak RSS in bytes.
type ComponentMemory struct {
	Name string
	Peak int64
}

// Total is the sum of the component peaks: an upper bound of the combined
// peak.
func (r MemoryReport) Total() int64 {
	var t int64
	for _, c := range r.Components {
		t += c.Peak
	}
	return t
}

func (r MemoryReport) String() string {
	parts := make([]string, 0, len(r.Components))
	for _, c := range r.Components {
		parts = append(parts, fmt.Sprintf("%s %d MiB", c.Name, c.Peak>>20))
	}
	return fmt.Sprintf("%d MiB total (%s)", r.Total()>>20, strings.Join(parts, ", "))
}

// PeakMemory reads the peak RSS of the running processes this Cluster
// started. Attached clusters report nothing.
func (c *Cluster) PeakMemory() MemoryReport {
	var r MemoryReport
	for _, p := range c.procs {
		if p.exited() != nil {
			continue
		}
		if peak, err := vmHWM(p.cmd.Process.Pid); err == nil {
			r.Components = append(r.Components, ComponentMemory{Name: p.name, Peak: peak})
		}
	}
	return r
}

// vmHWM returns the VmHWM line of /proc/<pid>/status in bytes.
func vmHWM(pid int) (int64, error) { return ProcStatus(pid, "VmHWM") }

// ProcStatus returns a memory field of /proc/<pid>/status (VmHWM, VmRSS,
// RssAnon, RssFile, ...) in bytes.
func ProcStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing %s %q: %w", field, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
