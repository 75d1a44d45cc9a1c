// Command lab runs the failover lab: by default the hermetic lab (the Karmada
// control plane and member clusters as local processes on 127.0.0.1), with
// LAB_PROVIDER=kind the kind lab (lab/kind; needs Docker). Each verb is a
// package under app/; the reference is docs/commands/lab.md. See
// docs/ARCHITECTURE.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/karmada-failover/lab/lab/cmd/lab/app"
)

func main() {
	// Karmada's certificate helpers log through klog; the steps say what happens.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.NewCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ERROR:", err)
		os.Exit(1)
	}
}
