// Package status is `lab status`: the lab's components and their health.
package status

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
)

// NewCommand returns `lab status`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Print the lab's record and a table of its components, PIDs, addresses and health",
		Long: `Print the lab's record and a table of its components, PIDs, addresses and
health. Fails when a component is not healthy.`,
		Args: cobra.NoArgs,
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, _ []string) error {
			out := cmd.OutOrStdout()
			st, err := p.State()
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			running := p.Running()
			switch {
			case st == nil && !running:
				fmt.Fprintln(out, "The lab is not up (make lab-up).")
				return nil
			case st != nil && st.StoppedAt != nil && !running:
				fmt.Fprintf(out, "The %s lab is down since %s (make lab-up).\n", st.Provider, st.StoppedAt.Format(time.RFC3339))
				return nil
			}
			if st != nil {
				fmt.Fprintf(out, "%s lab, Karmada %s, members %s, up since %s\n", st.Provider, st.Karmada, strings.Join(st.Members, ","), st.StartedAt.Format(time.RFC3339))
			}
			rows, err := p.Status(cmd.Context())
			if err != nil {
				return err
			}
			lab.PrintStatus(out, rows)
			for _, r := range rows {
				if !r.Healthy {
					return errors.New("some components are not healthy")
				}
			}
			return nil
		}),
	}
}
