// Package up is `lab up`: bring the lab up.
package up

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
)

// NewCommand returns `lab up`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "up",
		Short: "Bring the lab up (idempotent)",
		Long: `Bring the lab up: by default the hermetic lab (Karmada's control plane and the
member clusters as local processes on 127.0.0.1), with LAB_PROVIDER=kind the kind
lab. A lab that is up is left as it is. A failed bring-up is torn down unless
LAB_RETAIN=1. Settings come from the environment (docs/LAB.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, p, err := options.Open(cmd, true)
			if err != nil {
				return err
			}
			return run(cmd, root, p)
		},
	}
}

func run(cmd *cobra.Command, root string, p lab.Provider) error {
	out := cmd.OutOrStdout()
	cfg := p.Config()
	start := time.Now()
	isKind := p.Name() == config.ProviderKind
	if isKind {
		// The first step is the preflight: it fails fast, naming what is missing.
		fmt.Fprintf(out, "Bringing up the kind lab: Karmada %s from its tree, %d members, restore by %s, in %s\n", cfg.Karmada, cfg.Members, p.Restore(), options.Rel(root, cfg.Dir))
	} else {
		fmt.Fprintf(out, "Bringing up the hermetic lab: Karmada %s (%s), %d members, in %s\n", cfg.Karmada, karmadaVersion(cfg), cfg.Members, options.Rel(root, cfg.Dir))
	}
	err := lab.Up(cmd.Context(), p, lab.UpOptions{Out: out, Retain: cfg.Retain})
	if errors.Is(err, lab.ErrAlreadyUp) {
		fmt.Fprintln(out, "The lab is already up (make lab-status shows it; make lab-down stops it).")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The %s is up in %.0fs. Next:\n", map[bool]string{true: "kind lab", false: "lab"}[isKind], time.Since(start).Seconds())
	fmt.Fprintf(out, "  kubectl --kubeconfig %s --context %s get clusters\n", options.Rel(root, cfg.KarmadaKubeconfig()), config.KarmadaContext)
	if isKind {
		// The demo is rendered where the Flink operator runs (images pulled).
		if demo := filepath.Join(cfg.ManifestDir(), "flink-demo.yaml"); fileExists(demo) {
			fmt.Fprintf(out, "  kubectl --kubeconfig %s --context %s apply -f %s   # the Flink demo\n", options.Rel(root, cfg.KarmadaKubeconfig()), config.KarmadaContext, options.Rel(root, demo))
		}
		fmt.Fprintln(out, "  LAB_PROVIDER=kind make e2e | make lab-status | make lab-down   # status and down act on the kind lab while it is up")
		return nil
	}
	fmt.Fprintf(out, "  kubectl --kubeconfig %s --context member1 get nodes\n", options.Rel(root, cfg.MembersKubeconfig()))
	fmt.Fprintln(out, "  eval \"$(_output/bin/lab env)\"   # exports for kubectl, karmadactl and upstream's e2e suite")
	fmt.Fprintln(out, "  make e2e                    # the failover scenarios against this lab")
	fmt.Fprintln(out, "  make lab-status | make lab-down")
	return nil
}

func karmadaVersion(cfg *config.Config) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg.Bins.KarmadaControllerManager), ".build-stamp"))
	if err != nil || len(strings.Fields(string(b))) == 0 {
		return "version unknown"
	}
	return strings.Fields(string(b))[0]
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
