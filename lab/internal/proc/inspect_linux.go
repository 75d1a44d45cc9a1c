package proc

import (
	"bytes"
	"fmt"
	"os"
)

// Inspect reads /proc/<pid>: ok is false when there is no such process.
func Inspect(pid int) (Info, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Info{}, false
	}
	var info Info
	// The state is the field after the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		info.Zombie = true
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(cmdline) > 0 {
		info.Argv0 = string(bytes.SplitN(cmdline, []byte{0}, 2)[0])
	}
	info.Exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return info, true
}
