// Package failpods is `lab fail-pods`: pods that lose readiness and keep running.
package failpods

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab fail-pods`.
func NewCommand() *cobra.Command {
	var cluster, namespace, selector string
	var heal bool
	cmd := &cobra.Command{
		Use:   "fail-pods --cluster MEMBER --namespace NS --selector SELECTOR",
		Short: "Make pods unready (they keep running) to trigger application failover; --heal makes them Ready again",
		Long: `Make a member's pods unready while they keep running, to trigger Karmada's
application failover: on the hermetic lab, kwok's chaos stage (label
chaos.lab/not-ready=true); on the kind lab, the lab's workload in each pod through
the member API server's exec. --heal makes them Ready again.`,
		Args: cobra.NoArgs,
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, _ []string) error {
			n, err := p.FailPods(cmd.Context(), cluster, namespace, selector, heal)
			if err != nil {
				return err
			}
			verb := "not ready"
			if heal {
				verb = "ready again"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d pods of %s in %s/%s are %s.\n", n, selector, cluster, namespace, verb)
			return nil
		}),
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "member cluster")
	cmd.Flags().StringVar(&namespace, "namespace", "default", "namespace of the pods")
	cmd.Flags().StringVar(&selector, "selector", "", "label selector of the pods")
	cmd.Flags().BoolVar(&heal, "heal", false, "make the pods Ready again")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}
