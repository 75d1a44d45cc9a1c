// Command lab-workload is the e2e suite's workload on the kind lab's real kubelets
// (image failover-lab/workload, lab.WorkloadImage): it runs like the pause container
// until SIGTERM, and answers its readiness probe from a marker file in its own
// container, so an application failure is a failing readiness probe while the
// container keeps running (the kind lab's FailPods):
//
//	lab-workload            run until SIGTERM or SIGINT (exit 0)
//	lab-workload probe      the readiness probe: exit 1 while the marker exists
//	lab-workload unready    create the marker (the probe fails from then on)
//	lab-workload ready      remove the marker
//
// The marker is /lab-unready. On the
// hermetic lab kwok's fake nodes run nothing: its chaos stage stands in for the probe.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
)

// marker is in the root of the image, which holds nothing else (it runs as root).
const marker = "/lab-unready"

func main() {
	verb := ""
	if len(os.Args) > 1 {
		verb = os.Args[1]
	}
	if err := run(verb, marker); err != nil {
		fmt.Fprintln(os.Stderr, "lab-workload:", err)
		os.Exit(1)
	}
}

func run(verb, marker string) error {
	switch verb {
	case "":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		return nil
	case "probe":
		_, err := os.Stat(marker)
		switch {
		case err == nil:
			return fmt.Errorf("unready: %s exists (lab-workload ready removes it)", marker)
		case errors.Is(err, fs.ErrNotExist):
			return nil
		default:
			return err
		}
	case "unready":
		return os.WriteFile(marker, []byte("made unready by the lab\n"), 0o644)
	case "ready":
		if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown command %q: want none, probe, unready or ready", verb)
}
