// Package fault is `lab fault`: the faults that stop a component of the lab and start it
// again (lab.ComponentFaults), one verb each for injecting and healing.
package fault

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab fault` and its verbs.
func NewCommand() *cobra.Command {
	var rows []string
	for _, f := range lab.ComponentFaults {
		rows = append(rows, fmt.Sprintf("  %-22s %s", f.Fault, f.Doc))
	}
	cmd := &cobra.Command{
		Use:   "fault",
		Short: "Stop a component of the lab as a fault would, and start it again",
		Long: `Stop a component of the running lab (its record, lab.json) as a fault would, and
start it again. The faults:

` + strings.Join(rows, "\n") + `

A fault of a member names the member. ` + "`lab member`" + ` partitions and flaps members.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newList(), newInject(false), newInject(true))
	return cmd
}

func newList() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the faults and the component each stops on this lab",
		Args:  cobra.NoArgs,
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "FAULT\tCOMPONENT\tCRASH\tON THIS LAB")
			for _, f := range lab.ComponentFaults {
				here := "yes"
				if err := lab.Supports(p, f.Fault); err != nil {
					here = "no: " + err.Error()
				}
				fmt.Fprintf(w, "%s\t%s\t%t\t%s\n", f.Fault, f.Component, f.Kill, here)
			}
			return w.Flush()
		}),
	}
}

func newInject(heal bool) *cobra.Command {
	use, short := "inject FAULT [MEMBER]", "Stop the fault's component (a crash where the fault is one)"
	if heal {
		use, short = "heal FAULT [MEMBER]", "Start the fault's component again and wait until it is healthy"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.RangeArgs(1, 2),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			member := ""
			if len(args) == 2 {
				member = args[1]
			}
			fault := lab.Fault(args[0])
			var err error
			if heal {
				err = lab.Heal(cmd.Context(), p, fault, member, lab.StartOptions{})
			} else {
				err = lab.Inject(cmd.Context(), p, fault, member)
			}
			if err != nil {
				return err
			}
			f, _ := lab.ComponentFaultOf(fault)
			target, _ := f.Target(member)
			if heal {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is running again (%s healed).\n", target, fault)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is stopped (%s); `lab fault heal %s` starts it again.\n", target, fault, strings.Join(args, " "))
			}
			return nil
		}),
	}
}
