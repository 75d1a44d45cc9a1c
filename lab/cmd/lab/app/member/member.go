// Package member is `lab member`: the faults of a member cluster as a whole.
package member

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab member` and its verbs.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Crash, start, partition, heal or flap a member cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStop(), newStart(), newPartition(false), newPartition(true), newFlap())
	return cmd
}

func newStop() *cobra.Command {
	var graceful bool
	cmd := &cobra.Command{
		Use:   "stop MEMBER",
		Short: "Crash a member: SIGKILL, no grace (--graceful: SIGTERM and a grace period)",
		Long: `Crash a member cluster: SIGKILL to its processes and its Flink JVMs at once
(--graceful: SIGTERM with a grace period). Its API server is unreachable until
` + "`lab member start MEMBER`" + `. On the kind lab, the member's node container is
killed (docker kill) or stopped.`,
		Args: cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if _, err := p.Config().Member(args[0]); err != nil {
				return err
			}
			if err := p.StopComponent(cmd.Context(), args[0], !graceful); err != nil {
				return err
			}
			how := "crashed (SIGKILL, no grace)"
			if graceful {
				how = "stopped (SIGTERM, with grace)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is %s: its API server is unreachable until `lab member start %s`.\n", args[0], how, args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&graceful, "graceful", false, "SIGTERM and a grace period instead of a crash (SIGKILL)")
	return cmd
}

func newStart() *cobra.Command {
	return &cobra.Command{
		Use:   "start MEMBER",
		Short: "Start a stopped member again",
		Long: `Start a stopped member again. On the hermetic lab it returns once kwok manages
the member's nodes again (about 3.5 minutes after a restart on 2 cores: kwok's
controller is slow to pick its nodes up again).`,
		Args: cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if _, err := p.Config().Member(args[0]); err != nil {
				return err
			}
			if err := p.StartComponent(cmd.Context(), args[0], lab.StartOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is running again.\n", args[0])
			return nil
		}),
	}
}

func newPartition(heal bool) *cobra.Command {
	use, short := "partition MEMBER", "Cut Karmada off a member that keeps running (its traffic held, not refused)"
	if heal {
		use, short = "heal MEMBER", "Reconnect a partitioned member"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

On the hermetic lab Karmada reaches each member through the lab's lab-link
forwarder (the Cluster's apiEndpoint); a partition holds every byte and hangs new
connections without refusing or resetting them, as a broken network does. The
member's own processes, its Flink jobs and the e2e suite reach its API server
directly. On the kind lab the member's node drops every packet from and to the
host cluster's node (an iptables chain, LAB-PARTITION, run by docker exec), both
nodes running.`,
		Args: cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if err := p.Partition(cmd.Context(), args[0], heal); err != nil {
				return err
			}
			if heal {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is reachable by Karmada again.\n", args[0])
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is partitioned: it keeps running, Karmada cannot reach it until `lab member heal %s`.\n", args[0], args[0])
			}
			return nil
		}),
	}
}

func newFlap() *cobra.Command {
	var period, duration time.Duration
	cmd := &cobra.Command{
		Use:   "flap MEMBER",
		Short: "Partition and heal a member in turn every --period for --for (left healed)",
		Args:  cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			if err := lab.Flap(cmd.Context(), p, args[0], period, duration); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s flapped every %s for %s; it is reachable again.\n", args[0], period, duration)
			return nil
		}),
	}
	cmd.Flags().DurationVar(&period, "period", 5*time.Second, "time between a partition and a heal")
	cmd.Flags().DurationVar(&duration, "for", time.Minute, "how long to flap (the link is left healed)")
	return cmd
}
