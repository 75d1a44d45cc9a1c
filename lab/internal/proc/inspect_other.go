//go:build !linux

package proc

import (
	"os/exec"
	"strconv"
	"strings"
)

// Inspect asks ps(1) (POSIX; macOS has no /proc): ok is false when there is no
// such process.
func Inspect(pid int) (Info, bool) {
	out, err := exec.Command("ps", "-o", "stat=", "-o", "comm=", "-p", strconv.Itoa(pid)).Output()
	if err != nil { // ps exits 1 when no process matched
		return Info{}, false
	}
	stat, comm, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if stat == "" {
		return Info{}, false
	}
	comm = strings.TrimSpace(comm)
	// macOS prints the executable's path as comm.
	return Info{Zombie: strings.HasPrefix(stat, "Z"), Argv0: comm, Exe: comm}, true
}
