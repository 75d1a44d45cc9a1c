// Package options holds what every verb of the lab command shares: the
// repository it runs in and the lab it acts on.
package options

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/providers"
)

// RepoRoot is LAB_ROOT, or the nearest folder upwards holding the lab's go.mod.
func RepoRoot() (string, error) {
	if r := os.Getenv("LAB_ROOT"); r != "" {
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/karmada-failover/lab\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository, or set LAB_ROOT")
		}
		dir = parent
	}
}

// Open returns the repository root and the lab a verb acts on (providers.Open):
// the one LAB_PROVIDER names, or the kind lab when its record says it is up and
// no hermetic lab runs, which it then says on stderr. up is true for `lab up`.
func Open(cmd *cobra.Command, up bool) (string, lab.Provider, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", nil, err
	}
	p, recorded, err := providers.Open(root, up)
	if err != nil {
		return "", nil, err
	}
	if recorded {
		fmt.Fprintf(cmd.ErrOrStderr(), "# the %s lab recorded in %s is up: acting on it (LAB_PROVIDER=%s)\n", p.Name(), Rel(root, p.Config().Dir), p.Name())
	}
	return root, p, nil
}

// Rel is path relative to root when it is inside it, else path.
func Rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// OnLab is a verb's RunE that runs run on the lab the verb acts on (Open).
func OnLab(run func(cmd *cobra.Command, p lab.Provider, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		_, p, err := Open(cmd, false)
		if err != nil {
			return err
		}
		return run(cmd, p, args)
	}
}

// LoadConfig is the configuration of the provider's lab in this repository, for
// the verbs about one kind of lab whether or not it is up (kwok-stages, docker).
func LoadConfig(provider config.Provider) (*config.Config, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return config.LoadProvider(root, provider)
}
