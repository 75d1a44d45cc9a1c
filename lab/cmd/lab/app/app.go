// Package app is the lab command: one package per verb, put together here.
// Its reference (docs/commands/) is generated from these commands.
package app

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/karmada-failover/lab/lab/cmd/lab/app/clean"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/cluster"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/docker"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/down"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/env"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/failpods"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/fault"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/flink"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/kwokstages"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/member"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/restore"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/status"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/taint"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/up"
)

// NewCommand returns the lab command with every verb.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Run the failover lab: Karmada and its member clusters, and the faults real clusters have",
		Long: `Run the failover lab: by default the hermetic lab (Karmada's control plane and
the member clusters as local processes on 127.0.0.1), with LAB_PROVIDER=kind the
kind lab (Karmada on kind clusters; needs Docker). The verbs act on the lab that
is up. Settings come from the environment: LAB_PROVIDER=local|kind, LAB_MEMBERS,
LAB_KARMADA=patched|upstream, LAB_DIR, LAB_RETAIN=1, LAB_RESTORE=webhook|kyverno
and others (docs/LAB.md, "The lab and the e2e scenarios").`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(
		up.NewCommand(), down.NewCommand(), clean.NewCommand(), status.NewCommand(), env.NewCommand(),
		member.NewCommand(), fault.NewCommand(), taint.NewCommand(), cluster.NewCommand(), failpods.NewCommand(),
		flink.NewCommand(), restore.NewCommand(), kwokstages.NewCommand(), docker.NewCommand(),
		newGenDocs(),
	)
	return cmd
}

// newGenDocs returns the hidden `lab gen-docs DIR`: the command reference as
// Markdown, one page per command (docs/commands/, checked by TestCommandReference).
func newGenDocs() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Write the lab command's reference as Markdown into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return GenDocs(args[0])
		},
	}
}

// GenDocs writes the lab command's reference, one Markdown page per command,
// into dir, replacing the pages there (a removed command loses its page).
func GenDocs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "lab*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	root := NewCommand()
	root.DisableAutoGenTag = true
	return doc.GenMarkdownTree(root, dir)
}
