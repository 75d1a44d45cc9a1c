package lab

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// GiB is a gibibyte.
const GiB = uint64(1) << 30

// CheckFreeSpace refuses to bring a lab up in dir (or its nearest existing parent) when the
// file system holding it has less than need bytes free: a store that runs full midway
// (etcd, the checkpoint store, a kind node) breaks every later spec with errors far from
// the cause.
func CheckFreeSpace(dir string, need uint64) error {
	p, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		p = filepath.Dir(p)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("reading the free space of %s: %w", p, err)
	}
	free := st.Bavail * uint64(st.Bsize)
	if free < need {
		return fmt.Errorf("only %.1f GiB free on the file system of %s; the lab needs %.0f GiB there (its stores, logs and checkpoints): free some space",
			float64(free)/float64(GiB), p, float64(need)/float64(GiB))
	}
	return nil
}
