// Package kwokstages is `lab kwok-stages`: what the hermetic lab's stand-in kubelets do.
package kwokstages

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/local"
)

// NewCommand returns `lab kwok-stages`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kwok-stages",
		Short: "Print the kwok stages every member of the hermetic lab runs, with the lab's image-pull rule",
		Long: `Print the kwok stages every member of the hermetic lab runs (kwok stands in
for the members' kubelets), with the image-pull rule (LAB_UNPULLABLE_IMAGES,
LAB_PULLABLE_IMAGES) rendered in.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := options.LoadConfig(config.ProviderLocal)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "# image-pull rule: %s\n", cfg.ImagePull.Describe())
			b, err := local.New(cfg).KwokStages()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
}
