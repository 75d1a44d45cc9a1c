//go:build !linux

package pod

import (
	"context"
	"fmt"
	"runtime"
)

// IsInit reports whether this process is a pod's init process; never here.
func IsInit() bool { return false }

// Init is the pod's init process; there is none without Linux namespaces.
func Init() {}

// Run needs Linux network and mount namespaces.
func Run(context.Context, Spec) error {
	return fmt.Errorf("a lab pod needs Linux network and mount namespaces; %s has none (use the kind lab)", runtime.GOOS)
}
