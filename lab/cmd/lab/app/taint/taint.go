// Package taint is `lab taint`: a taint on a Karmada Cluster.
package taint

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
)

// NewCommand returns `lab taint`.
func NewCommand() *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "taint CLUSTER KEY[=VALUE]:EFFECT",
		Short: "Taint a Karmada Cluster through the Karmada API server, as karmadactl taint does",
		Args:  cobra.ExactArgs(2),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			return Cluster(cmd.Context(), p.Config(), args[0], args[1], remove)
		}),
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the taint instead of adding it")
	return cmd
}

// Cluster adds (or removes) taint KEY[=VALUE]:EFFECT on Karmada Cluster cluster,
// through the Karmada API server alone: the same on both labs.
func Cluster(ctx context.Context, cfg *config.Config, cluster, spec string, remove bool) error {
	t, err := lab.ParseTaint(spec)
	if err != nil {
		return err
	}
	kc, err := lab.KarmadaClient(cfg)
	if err != nil {
		return err
	}
	return lab.TaintCluster(ctx, kc, cluster, t, remove)
}
