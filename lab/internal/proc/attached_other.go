//go:build !linux

package proc

import "syscall"

// pdeathsig: no Pdeathsig here; StartAttached starts a watchdog instead.
const pdeathsig = false

func attachedSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
