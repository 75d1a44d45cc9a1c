// Package restore is `lab restore`: how the members restore a failed-over FlinkDeployment.
package restore

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab restore`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:       "restore [webhook|kyverno]",
		Short:     "Show or switch how the members restore a failed-over FlinkDeployment",
		Long:      "Show or switch how the members restore a failed-over FlinkDeployment: the restore webhook, or Kyverno calling the checkpoint locator (make lab-restore builds Kyverno first).",
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"webhook", "kyverno"},
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if len(args) == 1 {
				if err := p.SetRestore(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "The members restore with %s.\n", p.Restore())
			return nil
		}),
	}
}
