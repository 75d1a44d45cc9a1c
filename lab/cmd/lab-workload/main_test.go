package main

import (
	"path/filepath"
	"testing"
)

func TestProbeFollowsTheMarker(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "lab-unready")
	if err := run("probe", marker); err != nil {
		t.Fatalf("a fresh container is ready: %v", err)
	}
	if err := run("unready", marker); err != nil {
		t.Fatal(err)
	}
	if err := run("probe", marker); err == nil {
		t.Fatal("the probe passed with the marker set")
	}
	for i := 0; i < 2; i++ { // ready twice: the second finds nothing to remove
		if err := run("ready", marker); err != nil {
			t.Fatal(err)
		}
	}
	if err := run("probe", marker); err != nil {
		t.Fatalf("the probe failed once the marker was removed: %v", err)
	}
	if err := run("restart", marker); err == nil {
		t.Fatal("an unknown command was accepted")
	}
}
