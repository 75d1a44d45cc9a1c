package main

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Processes are read from /proc with procfs; a process that is gone or
// unreadable counts as zero.

// cpuSecondsOf is the user+system CPU time of pid.
func cpuSecondsOf(pid int) float64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.CPUTime()
}

// peakRSS is the peak resident memory (VmHWM) of pid in KiB.
func peakRSS(pid int) int64 {
	st, ok := status(pid)
	if !ok {
		return 0
	}
	return int64(st.VmHWM / 1024)
}

// treeRSS is the resident memory (VmRSS, KiB) of pid and its descendants.
func treeRSS(pid int) int64 {
	var total int64
	for _, p := range append([]int{pid}, descendants(pid)...) {
		if st, ok := status(p); ok {
			total += int64(st.VmRSS / 1024)
		}
	}
	return total
}

func status(pid int) (procfs.ProcStatus, bool) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStatus{}, false
	}
	st, err := p.NewStatus()
	return st, err == nil
}

// descendants lists the processes below pid, from every process's parent.
func descendants(pid int) []int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			children[st.PPID] = append(children[st.PPID], p.PID)
		}
	}
	var out []int
	var walk func(int)
	walk = func(parent int) {
		for _, c := range children[parent] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// machine describes this machine: cores and memory.
func machine() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "unknown machine"
	}
	cores := 0
	if cpus, err := fs.CPUInfo(); err == nil {
		cores = len(cpus)
	}
	mem := "unknown"
	if m, err := fs.Meminfo(); err == nil && m.MemTotal != nil {
		mem = fmt.Sprintf("%d kB", *m.MemTotal)
	}
	return fmt.Sprintf("%d cores, %s memory", cores, mem)
}
