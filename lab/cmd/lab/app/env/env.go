// Package env is `lab env`: the exports for the lab's clients.
package env

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab env`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "env",
		Short: "Print the exports for kubectl, karmadactl and upstream's e2e suite (eval \"$(_output/bin/lab env)\")",
		Args:  cobra.NoArgs,
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, _ []string) error {
			for _, line := range p.Env() {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		}),
	}
}
