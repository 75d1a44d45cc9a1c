//go:build !linux

package engine

// detachMountsUnder does nothing: the lab runs its own dockerd on Linux only.
func detachMountsUnder(string) {}
