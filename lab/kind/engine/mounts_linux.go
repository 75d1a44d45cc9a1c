package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// detachMountsUnder detaches every mount below dir (lazily: a busy one goes once unused).
func detachMountsUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	for _, m := range MountsUnder(string(b), dir) {
		_ = unix.Unmount(m, unix.MNT_DETACH)
	}
}
