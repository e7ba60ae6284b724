// Command cpumedian runs commands a number of times each, in turn, and
// prints the median user+system CPU of each whole process (start-up
// included), from the operating system's accounting of the finished child.
// The exit code of a command is ignored, so a usage error still measures
// start-up. Commands are separated by "::".
//
//	go run ./hack/cpumedian -n 21 bin/opctl --help :: bin/hello
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 21, "runs of each command")
	flag.Parse()
	var cmds [][]string
	cur := []string{}
	for _, a := range flag.Args() {
		if a == "::" {
			cmds = append(cmds, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, a)
	}
	cmds = append(cmds, cur)
	for _, c := range cmds {
		if len(c) == 0 {
			fmt.Fprintln(os.Stderr, "usage: cpumedian [-n RUNS] CMD [ARG...] [:: CMD [ARG...]]...")
			os.Exit(2)
		}
	}
	samples := make([][]time.Duration, len(cmds))
	for range *n {
		for i, c := range cmds {
			d, err := cpu(c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "cpumedian: %v\n", err)
				os.Exit(2)
			}
			samples[i] = append(samples[i], d)
		}
	}
	for i, c := range cmds {
		slices.Sort(samples[i])
		fmt.Printf("%8.1f ms  %v\n", ms(samples[i]), c)
	}
	if len(cmds) > 1 {
		fmt.Printf("ratio first/second: %.2f\n", ms(samples[0])/ms(samples[1]))
	}
}

// ms is the median of sorted samples in milliseconds.
func ms(sorted []time.Duration) float64 {
	return float64(sorted[len(sorted)/2].Microseconds()) / 1000
}

// cpu runs c with its output discarded and returns its user+system time.
func cpu(c []string) (time.Duration, error) {
	cmd := exec.Command(c[0], c[1:]...)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %v: %w", c, err)
	}
	_ = cmd.Wait() // the exit code is not the measure
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("%v: no rusage on this platform", c)
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)), nil
}
