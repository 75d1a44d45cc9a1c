package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ERROR:", err)
		os.Exit(1)
	}
}

// command is how a result file names the command that measured it.
func command(args []string) string {
	return strings.Join(append([]string{"go run ./bench"}, args...), " ")
}

// newCommand returns the bench command: the failover benchmark itself, and its
// verbs (one file each: report.go, plot.go, flinkrto.go, admission.go).
func newCommand() *cobra.Command {
	var (
		n, rounds int
		out       string
		resume    bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "What recording failover history and marking destinations costs: upstream against patched Karmada on one lab",
		Long: `On the running hermetic lab, the same cluster failover of N bindings against the
upstream Karmada build and the patched one (same source), alternating A B A B;
drain time, API requests, CPU and peak memory of the controllers, binding size;
medians and patched/upstream ratios. The result file is written after each round.
See docs/benchmarks.md.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(_ *cobra.Command, _ []string) error {
			klog.LogToStderr(false)
			return run(n, rounds, out, resume, command(os.Args[1:]))
		},
	}
	cmd.Flags().IntVarP(&n, "bindings", "n", 2000, "Deployments (bindings) per run")
	cmd.Flags().IntVar(&rounds, "rounds", 2, "rounds; each runs upstream then patched (A B A B ...)")
	cmd.Flags().StringVar(&out, "out", "_output/bench/result.json", "result file, written after each round")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue the rounds of --out when it was measured with the same builds, lab size and -n")

	var ao admissionOptions
	adm := &cobra.Command{
		Use:   "admission",
		Short: "What a member's API server pays to admit a FlinkDeployment: the restore webhook against Kyverno",
		Long: `On the running hermetic lab, dry-run creates of a marked and an unmarked
FlinkDeployment in a member's API server on each restore path (the restore
webhook, then Kyverno calling the checkpoint locator, alternating): latency, the
API server's webhook histogram, resident memory. The lab is put back to its
restore mode after.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			klog.LogToStderr(false)
			return admission(cmd.OutOrStdout(), ao, command(os.Args[1:]))
		},
	}
	adm.Flags().IntVarP(&ao.N, "creates", "n", 200, "dry-run creates per path, object and round")
	adm.Flags().IntVar(&ao.Rounds, "rounds", 2, "rounds; the paths alternate A B, B A, ...")
	adm.Flags().StringVar(&ao.Member, "member", "member1", "the member whose API server admits them")
	adm.Flags().StringVar(&ao.Out, "out", "_output/bench/admission.json", "result file")

	cmd.AddCommand(adm,
		&cobra.Command{
			Use:   "report RESULT.json",
			Short: "Print the tables of docs/benchmarks.md for a result file",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return report(cmd.OutOrStdout(), args[0])
			},
		},
		&cobra.Command{
			Use:   "summarize RESULT.json",
			Short: "Recompute the medians and ratios of a result file (after a change of measures)",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				res, err := readResult(args[0])
				if err != nil {
					return err
				}
				summarize(res)
				return writeResult(res, args[0], res.N, len(res.Runs)/2)
			},
		},
		&cobra.Command{
			Use:   "plot OUT.svg RESULT.json...",
			Short: "Drain time against N, upstream and patched, from result files, as an SVG",
			Args:  cobra.MinimumNArgs(2),
			RunE: func(_ *cobra.Command, args []string) error {
				return plot(args[0], args[1:])
			},
		},
		&cobra.Command{
			Use:   "flink-rto RECORDS.jsonl...",
			Short: "Each Flink failover's RTO phases, p50/p90 and the committed output's missing/duplicated (make flink-rto)",
			Args:  cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return flinkRTO(cmd.OutOrStdout(), args)
			},
		},
	)
	return cmd
}
