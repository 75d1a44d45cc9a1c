// Command lab-oci-runtime is the OCI runtime of the kind lab's own dockerd
// (lab/kind/engine): a wrapper around runc for machines whose capability
// bounding set lacks capabilities a privileged container asks for (some VMs
// and sandboxes drop CAP_SYS_RESOURCE). On create and run it removes those
// capabilities from the bundle's config.json, on exec from the process spec,
// and then hands the call, unchanged otherwise, to runc. kind's node
// containers run --privileged and kind drives them with docker exec
// --privileged, so both paths need it. It is never registered with a user's
// Docker engine; the lab's dockerd names it in its own daemon.json.
//
//	lab-oci-runtime --lab-runc=/usr/sbin/runc [runc's arguments]
//	lab-oci-runtime --lab-probe     exit 0 (the lab's privileged-container probe runs it)
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/karmada-failover/lab/lab/kind/engine"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == engine.ProbeFlag {
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "lab-oci-runtime:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	call, err := engine.ParseRuntimeCall(args, cwd)
	if err != nil {
		return err
	}
	if call.SpecFile != "" {
		bnd, err := engine.ReadBoundingSet("/proc/self/status")
		if err != nil {
			return err
		}
		if _, err := engine.FitCapabilities(call.SpecFile, bnd, call.Command == "exec"); err != nil {
			return fmt.Errorf("runc %s: fitting capabilities to the bounding set: %w", call.Command, err)
		}
	}
	runc, err := exec.LookPath(call.Runc)
	if err != nil {
		return err
	}
	return syscall.Exec(runc, append([]string{runc}, call.Args...), os.Environ())
}
