package kind

import (
	"path/filepath"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind/engine"
)

// EngineOptions are the kind lab's Docker engine settings: the lab's own
// dockerd lives in _output/kind/docker (outside LAB_DIR, so that lab-clean
// keeps the images it built), with _output/bin/lab-oci-runtime as its runtime.
func EngineOptions(cfg *config.Config) engine.Options {
	return engine.Options{
		Dir:     filepath.Join(cfg.Root, "_output", "kind", "docker"),
		Runtime: filepath.Join(cfg.Root, "_output", "bin", "lab-oci-runtime"),
		Mode:    cfg.Docker,
	}
}
