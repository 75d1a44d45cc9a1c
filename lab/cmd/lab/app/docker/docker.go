// Package docker is `lab docker`: the Docker engine the kind lab uses.
package docker

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
	"github.com/karmada-failover/lab/lab/kind/engine"
)

// NewCommand returns `lab docker` and its verbs: which engine the kind lab uses
// and why (choose: starts nothing), the lab's own dockerd (start, stop, status),
// and the DOCKER_HOST of the engine in use (env, for eval).
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "docker",
		Short: "The kind lab's Docker engine: the user's, or the lab's own dockerd where that cannot run privileged containers",
		Long: `The kind lab's Docker engine. The lab never changes a user's Docker
configuration: where the engine cannot run a privileged container, the lab runs
its own dockerd (own socket, data root, bridge, and an OCI runtime wrapper as its
default runtime). See docs/KIND.md.`,
		Args: cobra.NoArgs,
	}
	verb := func(use, short string, run func(cmd *cobra.Command, o engine.Options) error) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				cfg, err := options.LoadConfig(config.ProviderKind)
				if err != nil {
					return err
				}
				return run(cmd, kind.EngineOptions(cfg))
			},
		}
	}
	cmd.AddCommand(
		verb("choose", "Say which engine the kind lab would use and why (starts nothing)", func(cmd *cobra.Command, o engine.Options) error {
			e, err := engine.Choose(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Docker engine of the kind lab:", e)
			return nil
		}),
		verb("start", "Start the lab's own dockerd when the kind lab needs it", func(cmd *cobra.Command, o engine.Options) error {
			e, err := engine.Choose(cmd.Context(), o)
			if err != nil {
				return err
			}
			if _, running := engine.Running(o); e.Own && !running {
				why := e.Reason
				if e, err = engine.Start(cmd.Context(), o); err != nil {
					return err
				}
				e.Reason = why + "; started: " + e.Reason
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Docker engine of the kind lab:", e)
			return nil
		}),
		verb("stop", "Stop the lab's own dockerd", func(cmd *cobra.Command, o engine.Options) error {
			pid, running := engine.Running(o)
			if err := engine.Stop(cmd.Context(), o); err != nil {
				return err
			}
			if running {
				fmt.Fprintf(cmd.OutOrStdout(), "The lab's dockerd (pid %d) is stopped.\n", pid)
			}
			return nil
		}),
		verb("status", "Say which engine the kind lab uses now", func(cmd *cobra.Command, o engine.Options) error {
			fmt.Fprintln(cmd.OutOrStdout(), "Docker engine of the kind lab:", engine.Current(o))
			return nil
		}),
		verb("env", "Print the DOCKER_HOST of the engine in use, for eval", func(cmd *cobra.Command, o engine.Options) error {
			for _, kv := range engine.Current(o).Env() {
				fmt.Fprintln(cmd.OutOrStdout(), "export "+kv)
			}
			return nil
		}),
	)
	return cmd
}
