// Package cluster is `lab cluster`: an operator's assertions about a member cluster.
package cluster

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/taint"
	"github.com/karmada-failover/lab/lab/config"
)

// NewCommand returns `lab cluster` and its verbs.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Fence a member cluster (out-of-service)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newOutOfService())
	return cmd
}

func newOutOfService() *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "out-of-service MEMBER",
		Short: "Fence a member with the taint " + config.OutOfServiceTaint,
		Long: `Fence a member: an operator's (or a fencing automation's) assertion that its
workloads are stopped, as the taint ` + config.OutOfServiceTaint + `
added by karmadactl taint would be. Karmada then fails its workloads over at once
with their state and does not wait for their deletion (purge mode Directly).
Remove it (--remove) once the member is back and Karmada deleted the old copies.`,
		Args: cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if err := taint.Cluster(cmd.Context(), p.Config(), args[0], config.OutOfServiceTaint, remove); err != nil {
				return err
			}
			if remove {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is no longer out of service.\n", args[0])
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is out of service (%s): its workloads fail over with their state.\n", args[0], config.OutOfServiceTaint)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the out-of-service taint (once Karmada deleted the member's old copies)")
	return cmd
}
