package proc

import "syscall"

// pdeathsig: the kernel kills attached processes when their starter dies.
const pdeathsig = true

func attachedSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
