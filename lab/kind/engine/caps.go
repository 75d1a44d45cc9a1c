package engine

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// capabilityNames are Linux's capabilities by number (linux/capability.h), as
// the OCI runtime spec names them.
var capabilityNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// BoundingSet is the capability bounding set of a process: no process it
// starts, in a container or not, can hold a capability outside it.
type BoundingSet uint64

// Has reports whether the set holds the capability named as the OCI runtime
// spec names it (CAP_SYS_ADMIN). A name this table does not know counts as
// held: only what is known to be missing is ever dropped.
func (b BoundingSet) Has(name string) bool {
	for i, n := range capabilityNames {
		if n == name {
			return b&(1<<uint(i)) != 0
		}
	}
	return true
}

// Missing lists the known capabilities up to last (the kernel's
// /proc/sys/kernel/cap_last_cap) that the set lacks.
func (b BoundingSet) Missing(last int) []string {
	var m []string
	for i := 0; i <= last && i < len(capabilityNames); i++ {
		if b&(1<<uint(i)) == 0 {
			m = append(m, capabilityNames[i])
		}
	}
	return m
}

// ReadBoundingSet reads the CapBnd line of a /proc/<pid>/status file.
func ReadBoundingSet(statusPath string) (BoundingSet, error) {
	f, err := os.Open(statusPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: CapBnd %q: %w", statusPath, strings.TrimSpace(v), err)
			}
			return BoundingSet(n), nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no CapBnd line", statusPath)
}

// LastCap reads the kernel's highest capability number; without the file it
// assumes the highest this table knows.
func LastCap(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return len(capabilityNames) - 1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return len(capabilityNames) - 1
	}
	return n
}
