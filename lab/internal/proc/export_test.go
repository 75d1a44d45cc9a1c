package proc

import "syscall"

// attachedSysProcAttrForTest puts a test's child in a process group of its own
// without Pdeathsig, as on systems that have none.
func attachedSysProcAttrForTest() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
