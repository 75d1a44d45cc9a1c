// Package clean is `lab clean`: the lab down and its folder removed.
package clean

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab clean`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Take the lab down, then remove its folder (_output/lab, _output/lab-kind)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, p, err := options.Open(cmd, false)
			if err != nil {
				return err
			}
			if err := lab.Clean(cmd.Context(), p, cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "The lab is down and %s is removed.\n", options.Rel(root, p.Config().Dir))
			return nil
		},
	}
}
