// Command lab runs the failover lab: by default the hermetic lab (the Karmada
// control plane and member clusters as local processes on 127.0.0.1), with
// LAB_PROVIDER=kind the kind lab (lab/kind; needs Docker). See
// docs/ARCHITECTURE.md.
//
//	lab up                      bring the lab up (idempotent)
//	lab down                    stop every process of the lab by PID
//	lab clean                   down, then remove _output/lab
//	lab status                  table of components, PIDs, addresses, health
//	lab env                     exports for kubectl, karmadactl and upstream's e2e
//	lab member stop NAME [--graceful]  crash a member cluster (SIGKILL; --graceful: SIGTERM)
//	lab member start NAME       start a stopped member cluster again
//	lab member partition|heal NAME  cut Karmada off a running member / reconnect it
//	lab member flap NAME [--period 5s] [--for 1m]  partition and heal in turn
//	lab taint NAME KEY[=V]:EFFECT [--remove]
//	lab cluster out-of-service NAME [--remove]  fence a member: taint it failover.karmada.io/out-of-service
//	lab fail-pods --cluster NAME --namespace NS --selector SEL [--heal]
//	lab kwok-stages             print the kwok stages every member of the hermetic lab runs
//	lab flink verify NS/NAME    check the committed output of a FlinkDeployment (hermetic lab)
//	lab flink replication-lag s3://BUCKET/DIR/JOB_ID | --catch-up PARKED
//	                            hide a state file of the job's newest checkpoint (a replica behind), or put it back
//	lab docker choose|start|stop|status|env  the kind lab's Docker engine (lab/kind/engine)
//
// Settings come from the environment (lab/config): LAB_PROVIDER=local|kind,
// LAB_MEMBERS, LAB_KARMADA=patched|upstream, LAB_DIR, LAB_RETAIN=1,
// LAB_RESTORE=webhook|kyverno (kind) and others. On the kind lab, member stop
// stops the member's node container and fail-pods is not available.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/flinkverify"
	"github.com/karmada-failover/lab/lab/kind"
	"github.com/karmada-failover/lab/lab/local"
	"github.com/karmada-failover/lab/lab/providers"
)

func main() {
	// Karmada's certificate helpers log through klog; the steps say what happens.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ERROR:", err)
		os.Exit(1)
	}
}

func usage() error {
	return errors.New(`usage: lab up | down | clean | status | env | member stop NAME [--graceful] | member start NAME |
       member partition|heal NAME | member flap NAME [--period 5s] [--for 1m] |
       taint NAME KEY[=VALUE]:EFFECT [--remove] | cluster out-of-service NAME [--remove] | fail-pods --cluster NAME --namespace NS --selector SEL [--heal] |
       kwok-stages | flink verify NAMESPACE/NAME [--json] | flink replication-lag s3://BUCKET/DIR/JOB_ID|--catch-up PARKED | restore [webhook|kyverno] | docker choose|start|stop|status|env`)
}

func run(args []string) error {
	if len(args) == 0 {
		return usage()
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if args[0] == "docker" {
		return dockerEngine(root, args[1:])
	}
	p, recorded, err := providers.Open(root, args[0] == "up")
	if err != nil {
		return err
	}
	cfg := p.Config()
	if recorded {
		fmt.Fprintf(os.Stderr, "# the %s lab recorded in %s is up: acting on it (LAB_PROVIDER=%s)\n", p.Name(), rel(root, cfg.Dir), p.Name())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch args[0] {
	case "up":
		return up(ctx, root, p)
	case "down":
		if err := p.Down(ctx, os.Stdout); err != nil {
			return err
		}
		if p.Name() == config.ProviderKind {
			fmt.Println("The kind lab is down: its kind clusters are deleted.")
		} else {
			fmt.Println("The lab is down: no process of it is left.")
		}
		return nil
	case "clean":
		if err := p.Clean(ctx, os.Stdout); err != nil {
			return err
		}
		fmt.Printf("The lab is down and %s is removed.\n", rel(root, cfg.Dir))
		return nil
	case "status":
		return status(ctx, p)
	case "env":
		for _, line := range p.Env() {
			fmt.Println(line)
		}
		return nil
	case "member":
		if len(args) < 3 {
			return usage()
		}
		switch args[1] {
		case "stop":
			fs := flag.NewFlagSet("member stop", flag.ContinueOnError)
			graceful := fs.Bool("graceful", false, "SIGTERM and a grace period instead of a crash (SIGKILL)")
			if err := fs.Parse(reorder(args[2:])); err != nil || fs.NArg() != 1 {
				return usage()
			}
			name := fs.Arg(0)
			if err := p.StopCluster(ctx, name, *graceful); err != nil {
				return err
			}
			how := "crashed (SIGKILL, no grace)"
			if *graceful {
				how = "stopped (SIGTERM, with grace)"
			}
			fmt.Printf("%s is %s: its API server is unreachable until `lab member start %s`.\n", name, how, name)
			return nil
		case "partition", "heal":
			if len(args) != 3 {
				return usage()
			}
			heal := args[1] == "heal"
			if err := p.Partition(ctx, args[2], heal); err != nil {
				return err
			}
			if heal {
				fmt.Printf("%s is reachable by Karmada again.\n", args[2])
			} else {
				fmt.Printf("%s is partitioned: it keeps running, Karmada cannot reach it until `lab member heal %s`.\n", args[2], args[2])
			}
			return nil
		case "flap":
			fs := flag.NewFlagSet("member flap", flag.ContinueOnError)
			period := fs.Duration("period", 5*time.Second, "time between a partition and a heal")
			duration := fs.Duration("for", time.Minute, "how long to flap (the link is left healed)")
			if err := fs.Parse(reorder(args[2:])); err != nil || fs.NArg() != 1 {
				return usage()
			}
			if err := lab.Flap(ctx, p, fs.Arg(0), *period, *duration); err != nil {
				return err
			}
			fmt.Printf("%s flapped every %s for %s; it is reachable again.\n", fs.Arg(0), *period, *duration)
			return nil
		case "start":
			if len(args) != 3 {
				return usage()
			}
			if err := p.StartCluster(ctx, args[2]); err != nil {
				return err
			}
			fmt.Printf("%s is running again.\n", args[2])
			return nil
		}
		return usage()
	case "taint":
		fs := flag.NewFlagSet("taint", flag.ContinueOnError)
		remove := fs.Bool("remove", false, "remove the taint instead of adding it")
		if err := fs.Parse(reorder(args[1:])); err != nil || fs.NArg() != 2 {
			return usage()
		}
		// Through the Karmada API server alone, the same on both labs.
		return taint(ctx, cfg, fs.Arg(0), fs.Arg(1), *remove)
	case "cluster":
		// An operator's (or a fencing automation's) assertion that the member's
		// workloads are stopped: Karmada then hands their state over and completes a
		// purge mode Directly failover without waiting for the member to return.
		fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
		remove := fs.Bool("remove", false, "remove the out-of-service taint (once Karmada deleted the member's old copies)")
		if err := fs.Parse(reorder(args[1:])); err != nil || fs.NArg() != 2 || fs.Arg(0) != "out-of-service" {
			return usage()
		}
		if err := taint(ctx, cfg, fs.Arg(1), config.OutOfServiceTaint, *remove); err != nil {
			return err
		}
		if *remove {
			fmt.Printf("%s is no longer out of service.\n", fs.Arg(1))
		} else {
			fmt.Printf("%s is out of service (%s): its workloads fail over with their state.\n", fs.Arg(1), config.OutOfServiceTaint)
		}
		return nil
	case "kwok-stages":
		// What the hermetic lab's stand-in kubelets do, with the image-pull rule
		// (LAB_UNPULLABLE_IMAGES, LAB_PULLABLE_IMAGES) rendered in.
		fmt.Fprintf(os.Stderr, "# image-pull rule: %s\n", cfg.ImagePull.Describe())
		b, err := local.New(cfg).KwokStages()
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(b)
		return err
	case "flink":
		switch {
		case len(args) >= 3 && args[1] == "verify":
			return verifyFlinkOutput(cfg, args[2:])
		case len(args) == 3 && args[1] == "replication-lag":
			return replicationLag(ctx, p, args[2], "")
		case len(args) == 4 && args[1] == "replication-lag" && args[2] == "--catch-up":
			return replicationLag(ctx, p, "", args[3])
		}
		return usage()
	case "restore":
		// Show or switch how the members restore a failed-over FlinkDeployment.
		r, ok := p.(lab.RestoreModes)
		if !ok {
			return fmt.Errorf("the %s lab chooses its restore mode when it comes up (LAB_RESTORE)", p.Name())
		}
		if len(args) == 2 {
			if err := r.SetRestore(ctx, args[1]); err != nil {
				return err
			}
		} else if len(args) != 1 {
			return usage()
		}
		fmt.Printf("The members restore with %s.\n", r.Restore())
		return nil
	case "fail-pods":
		fs := flag.NewFlagSet("fail-pods", flag.ContinueOnError)
		cluster := fs.String("cluster", "", "member cluster")
		ns := fs.String("namespace", "default", "namespace of the pods")
		sel := fs.String("selector", "", "label selector of the pods")
		heal := fs.Bool("heal", false, "make the pods Ready again")
		if err := fs.Parse(args[1:]); err != nil || *cluster == "" {
			return usage()
		}
		n, err := p.FailPods(ctx, *cluster, *ns, *sel, *heal)
		if err != nil {
			return err
		}
		verb := "not ready"
		if *heal {
			verb = "ready again"
		}
		fmt.Printf("%d pods of %s in %s/%s are %s.\n", n, *sel, *cluster, *ns, verb)
		return nil
	}
	return usage()
}

// replicationLag is `lab flink replication-lag s3://BUCKET/DIR/JOB_ID`: a
// state file of the job's newest completed checkpoint hidden from the lab's
// store, as a replica behind; `--catch-up PARKED` puts it back.
func replicationLag(ctx context.Context, p lab.Provider, jobDir, parked string) error {
	cs, ok := p.(lab.CheckpointStore)
	if !ok {
		return fmt.Errorf("the %s lab has no S3 store this host reaches", p.Name())
	}
	creds, err := cs.S3Credentials()
	if err != nil {
		return err
	}
	if parked != "" {
		l, err := lab.LagOf(parked)
		if err != nil {
			return err
		}
		if err := l.CatchUp(ctx, creds); err != nil {
			return err
		}
		fmt.Printf("%s is back: the replica caught up.\n", l.File)
		return nil
	}
	l, err := lab.ReplicationLag(ctx, creds, jobDir)
	if err != nil {
		return err
	}
	fmt.Printf("Hidden %s: checkpoint chk-%d has its _metadata but not this state file, as a replica behind.\n", l.File, l.ID)
	fmt.Printf("Undo: lab flink replication-lag --catch-up %s\n", l.Parked)
	return nil
}

// verifyFlinkOutput is `lab flink verify NAMESPACE/NAME [--json]`: the
// committed output of the lab's Flink job for that FlinkDeployment, across
// every run on every member. It fails when a record is missing or duplicated.
func verifyFlinkOutput(cfg *config.Config, args []string) error {
	fs := flag.NewFlagSet("flink verify", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(reorder(args)); err != nil || fs.NArg() != 1 {
		return usage()
	}
	ns, name, ok := strings.Cut(fs.Arg(0), "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%q: want NAMESPACE/NAME of a FlinkDeployment", fs.Arg(0))
	}
	if cfg.Provider != config.ProviderLocal {
		return fmt.Errorf("lab flink verify reads the hermetic lab's output directory; the %s lab's jobs write none", cfg.Provider)
	}
	dir := filepath.Join(cfg.FlinkOutputDir(), ns, name)
	r, err := flinkverify.Verify(os.DirFS(dir))
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	} else {
		fmt.Printf("%s/%s: %s\n", ns, name, r)
		for _, w := range r.Writers {
			fmt.Printf("  writer %s: %d records %d..%d in %d files, %s .. %s\n", w.ID, w.Records, w.First, w.Last, w.Files,
				w.Start.Format(time.RFC3339Nano), w.End.Format(time.RFC3339Nano))
		}
	}
	if o := r.Overlaps(); len(o) > 0 {
		fmt.Printf("  two instances wrote at once: %s\n", strings.Join(o, "; "))
	}
	if r.Files == 0 && r.UncommittedFiles == 0 {
		return fmt.Errorf("no output in %s: is %s/%s running with --output-dir %s?", dir, ns, name, (&url.URL{Scheme: "file", Path: dir}).String())
	}
	if !r.OK() {
		return fmt.Errorf("%s/%s: %d records missing (first %d), %d duplicated (first %d)", ns, name, r.Missing, r.FirstMissing, r.Duplicated, r.FirstDuplicated)
	}
	return nil
}

// up brings the lab up and says what to do next.
func up(ctx context.Context, root string, p lab.Provider) error {
	cfg := p.Config()
	start := time.Now()
	kl, isKind := p.(*kind.Lab)
	if isKind {
		// The first step is the preflight: it fails fast, naming what is missing.
		fmt.Printf("Bringing up the kind lab: Karmada %s from its tree, %d members, restore by %s, in %s\n", cfg.Karmada, cfg.Members, kl.Restore(), rel(root, cfg.Dir))
	} else {
		fmt.Printf("Bringing up the hermetic lab: Karmada %s (%s), %d members, in %s\n", cfg.Karmada, karmadaVersion(cfg), cfg.Members, rel(root, cfg.Dir))
	}
	err := p.Up(ctx, lab.UpOptions{Out: os.Stdout, Retain: cfg.Retain})
	if errors.Is(err, lab.ErrAlreadyUp) {
		fmt.Println("The lab is already up (make lab-status shows it; make lab-down stops it).")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("The %s is up in %.0fs. Next:\n", map[bool]string{true: "kind lab", false: "lab"}[isKind], time.Since(start).Seconds())
	fmt.Printf("  kubectl --kubeconfig %s --context %s get clusters\n", rel(root, cfg.KarmadaKubeconfig()), config.KarmadaContext)
	if isKind {
		// The demo is rendered where the Flink operator runs (images pulled).
		if demo := filepath.Join(cfg.ManifestDir(), "flink-demo.yaml"); fileExists(demo) {
			fmt.Printf("  kubectl --kubeconfig %s --context %s apply -f %s   # the Flink demo\n", rel(root, cfg.KarmadaKubeconfig()), config.KarmadaContext, rel(root, demo))
		}
		fmt.Println("  LAB_PROVIDER=kind make e2e | make lab-status | make lab-down   # status and down act on the kind lab while it is up")
		return nil
	}
	fmt.Printf("  kubectl --kubeconfig %s --context member1 get nodes\n", rel(root, cfg.MembersKubeconfig()))
	fmt.Println("  eval \"$(_output/bin/lab env)\"   # exports for kubectl, karmadactl and upstream's e2e suite")
	fmt.Println("  make e2e                    # the failover scenarios against this lab")
	fmt.Println("  make lab-status | make lab-down")
	return nil
}

// status prints the lab's record and the table of its components; it fails when one is not healthy.
func status(ctx context.Context, p lab.Provider) error {
	st, err := p.State()
	if errors.Is(err, os.ErrNotExist) {
		if lp, ok := p.(*local.Lab); !ok || !lp.Running() {
			fmt.Println("The lab is not up (make lab-up).")
			return nil
		}
	}
	if st != nil {
		fmt.Printf("%s lab, Karmada %s, members %s, up since %s\n", st.Provider, st.Karmada, strings.Join(st.Members, ","), st.StartedAt.Format(time.RFC3339))
	}
	rows, err := p.Status(ctx)
	if err != nil {
		return err
	}
	lab.PrintStatus(os.Stdout, rows)
	for _, r := range rows {
		if !r.Healthy {
			return errors.New("some components are not healthy")
		}
	}
	return nil
}

// taint adds (or removes) taint KEY[=VALUE]:EFFECT on Karmada Cluster cluster.
func taint(ctx context.Context, cfg *config.Config, cluster, spec string, remove bool) error {
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

// reorder moves flags before positional arguments, so `taint m1 k:NoExecute --remove` parses.
func reorder(args []string) []string {
	var flags, pos []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			pos = append(pos, a)
		}
	}
	return append(flags, pos...)
}

func karmadaVersion(cfg *config.Config) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg.Bins.KarmadaControllerManager), ".build-stamp"))
	if err != nil {
		return "version unknown"
	}
	return strings.Fields(string(b))[0]
}

// repoRoot is LAB_ROOT, or the nearest folder upwards holding the lab's go.mod.
func repoRoot() (string, error) {
	if r := os.Getenv("LAB_ROOT"); r != "" {
		return filepath.Abs(r)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/karmada-failover/lab\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository, or set LAB_ROOT")
		}
		dir = parent
	}
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
