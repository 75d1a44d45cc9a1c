// Package flink is `lab flink`: the committed output of the lab's Flink jobs and
// the checkpoint store's replication.
package flink

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/cmd/lab/app/options"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/flinkverify"
)

// NewCommand returns `lab flink` and its verbs.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flink",
		Short: "Check a FlinkDeployment's committed output; hold back the checkpoint store's replica",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newVerify(), newReplicationLag())
	return cmd
}

func newVerify() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify NAMESPACE/NAME",
		Short: "Check the committed output of a FlinkDeployment of the lab's job (hermetic lab); fails on a missing or duplicated record",
		Long: `Read the committed output of a FlinkDeployment of the lab's job
(_output/lab/flink-output/<ns>/<name>/: FileSink part files of every run on every
member) and print expected, missing, duplicated, max, the uncommitted records and
how many of them a later run committed again (reprocessed), and any two writers
whose output overlaps in time. Exits non-zero on any missing or duplicated record.`,
		Args: cobra.ExactArgs(1),
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			return verify(cmd, p.Config(), args[0], asJSON)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// verify checks the committed output of the lab's Flink job for that
// FlinkDeployment, across every run on every member.
func verify(cmd *cobra.Command, cfg *config.Config, ref string, asJSON bool) error {
	out := cmd.OutOrStdout()
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%q: want NAMESPACE/NAME of a FlinkDeployment", ref)
	}
	if cfg.Provider != config.ProviderLocal {
		return fmt.Errorf("lab flink verify reads the hermetic lab's output directory; the %s lab's jobs write none", cfg.Provider)
	}
	dir := filepath.Join(cfg.FlinkOutputDir(), ns, name)
	r, err := flinkverify.Verify(os.DirFS(dir))
	if err != nil {
		return err
	}
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(out, string(b))
	} else {
		fmt.Fprintf(out, "%s/%s: %s\n", ns, name, r)
		for _, w := range r.Writers {
			fmt.Fprintf(out, "  writer %s: %d records %d..%d in %d files, %s .. %s\n", w.ID, w.Records, w.First, w.Last, w.Files,
				w.Start.Format(time.RFC3339Nano), w.End.Format(time.RFC3339Nano))
		}
	}
	if o := r.Overlaps(); len(o) > 0 {
		fmt.Fprintf(out, "  two instances wrote at once: %s\n", strings.Join(o, "; "))
	}
	if r.Files == 0 && r.UncommittedFiles == 0 {
		return fmt.Errorf("no output in %s: is %s/%s running with --output-dir %s?", dir, ns, name, (&url.URL{Scheme: "file", Path: dir}).String())
	}
	if !r.OK() {
		return fmt.Errorf("%s/%s: %d records missing (first %d), %d duplicated (first %d)", ns, name, r.Missing, r.FirstMissing, r.Duplicated, r.FirstDuplicated)
	}
	return nil
}

func newReplicationLag() *cobra.Command {
	var parked string
	cmd := &cobra.Command{
		Use:   "replication-lag s3://BUCKET/DIR/JOB_ID | --catch-up PARKED",
		Short: "Hide a state file of the job's newest checkpoint (a replica behind), or put it back",
		Long: `A replica of the checkpoint store behind: one state file of the job's newest
completed checkpoint (chosen from the store's listing of its chk-N/, not from
_metadata) moved aside under s3://<bucket>/.lab-replication-lag/, its _metadata
kept, until --catch-up PARKED puts it back. The job must write its state to files
(execution.checkpointing.data-inline-threshold: 0).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if (parked == "") == (len(args) == 1) && len(args) <= 1 {
				return nil
			}
			return fmt.Errorf("want either s3://BUCKET/DIR/JOB_ID or --catch-up PARKED")
		},
		RunE: options.OnLab(func(cmd *cobra.Command, p lab.Provider, args []string) error {
			creds, err := p.S3Credentials()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if parked != "" {
				l, err := lab.LagOf(parked)
				if err != nil {
					return err
				}
				if err := l.CatchUp(cmd.Context(), creds); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s is back: the replica caught up.\n", l.File)
				return nil
			}
			l, err := lab.ReplicationLag(cmd.Context(), creds, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Hidden %s: checkpoint chk-%d has its _metadata but not this state file, as a replica behind.\n", l.File, l.ID)
			fmt.Fprintf(out, "Undo: lab flink replication-lag --catch-up %s\n", l.Parked)
			return nil
		}),
	}
	cmd.Flags().StringVar(&parked, "catch-up", "", "put back the state file parked at this URI")
	return cmd
}
