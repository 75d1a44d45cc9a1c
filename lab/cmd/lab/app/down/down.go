// Package down is `lab down`: stop the lab.
package down

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
)

// NewCommand returns `lab down`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the lab by PID (kind lab: delete its kind clusters)",
		Long: `Stop every process of the lab by PID; on the kind lab, delete its kind clusters
and stop the lab's own dockerd. Without LAB_PROVIDER it acts on the kind lab when
that is the one recorded as up and no hermetic lab runs.`,
		Args: cobra.NoArgs,
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, _ []string) error {
			if err := lab.Down(cmd.Context(), p, cmd.OutOrStdout()); err != nil {
				return err
			}
			if p.Name() == config.ProviderKind {
				fmt.Fprintln(cmd.OutOrStdout(), "The kind lab is down: its kind clusters are deleted.")
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), "The lab is down: no process of it is left.")
			}
			return nil
		}),
	}
}
