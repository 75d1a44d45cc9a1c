// Package providers chooses the lab's provider, once: the one LAB_PROVIDER names, or, for
// commands that act on a lab that exists, the one whose record (lab.json) says it is up.
package providers

import (
	"errors"
	"os"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
	"github.com/karmada-failover/lab/lab/local"
)

// New returns the provider of cfg.
func New(cfg *config.Config) (lab.Provider, error) {
	if cfg.Provider == config.ProviderKind {
		return kind.New(cfg)
	}
	return local.New(cfg), nil
}

// Open returns the provider of the lab a command acts on. With LAB_PROVIDER set, or to bring
// a lab up, that is the configured one. Otherwise, when no hermetic lab is running and the
// kind lab's record says it is up, the kind lab: a plain `make lab-down` takes it down instead
// of leaving its clusters running. recorded tells that the recorded lab was chosen.
func Open(root string, up bool) (p lab.Provider, recorded bool, err error) {
	cfg, err := config.Load(root)
	if err != nil {
		return nil, false, err
	}
	if up || cfg.ProviderSet || cfg.Provider != config.ProviderLocal || local.New(cfg).Running() {
		p, err = New(cfg)
		return p, false, err
	}
	kcfg, err := config.LoadProvider(root, config.ProviderKind)
	if err != nil {
		return nil, false, err
	}
	if st, err := lab.ReadState(kcfg); err == nil && st.Ready && st.Provider == config.ProviderKind {
		p, err = New(kcfg)
		return p, true, err
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	p, err = New(cfg)
	return p, false, err
}
