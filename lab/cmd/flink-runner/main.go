// Command flink-runner is the lab's stand-in for flink-kubernetes-operator in
// one member cluster: it watches FlinkDeployments and runs each job in a local
// Flink MiniCluster JVM instead of JobManager/TaskManager pods. See
// lab/flinkrunner/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/karmada-failover/lab/lab/flinkrunner"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// kvFlag is a repeatable key=value flag.
type kvFlag map[string]string

func (f kvFlag) String() string { return fmt.Sprint(map[string]string(f)) }

func (f kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	f[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

func main() {
	klog.InitFlags(nil)
	var (
		kubeconfig  = flag.String("kubeconfig", "", "kubeconfig of the member cluster (default: $KUBECONFIG / ~/.kube/config)")
		kubeContext = flag.String("context", "", "kubeconfig context (default: current context)")
		defaultJar  = flag.String("default-jar", "lab/flink/target/failover-lab-flink-job.jar", "jar used when spec.job.jarURI is not a local file on this host")
		portRange   = flag.String("rest-port-range", "24700-24799", "range for the Flink REST ports (bound to 127.0.0.1)")
		taskSlots   = flag.Int("task-slots", -1, "force taskmanager.numberOfTaskSlots on every job; 0 = no TaskManager + adaptive scheduler (jobs stay CREATED); -1 = Flink default")
		logDir      = flag.String("log-dir", "flink-runner-logs", "directory for <namespace>_<name>.log of each Flink process")
		healthAddr  = flag.String("health-addr", "", "address for /healthz, /readyz, /debug/jobs (e.g. 127.0.0.1:24690; empty = off)")
		java        = flag.String("java", "java", "java binary")
		javaOpts    = flag.String("java-opts", "", "extra JVM flags, space separated (e.g. -Xmx512m)")
		mainClass   = flag.String("main-class", flinkrunner.DefaultMainClass, "main class run from the jar")
		pluginsDir  = flag.String("flink-plugins-dir", "", "FLINK_PLUGINS_DIR for the Flink processes (empty = inherit)")
		poll        = flag.Duration("poll-interval", 2*time.Second, "REST poll period per job")
		stopGrace   = flag.Duration("stop-grace", 20*time.Second, "SIGTERM -> SIGKILL grace when stopping a Flink process")
		deletion    = flag.Duration("deletion-time", 3*time.Second, "how long a deleted FlinkDeployment's job runs on before it is cancelled (or stopped with a savepoint) and its finalizer removed, as the operator's reaction and the JobManager's shutdown take; annotation "+flinkrunner.DeletionTimeAnnotation+" overrides it per object")
		flinkConf   = kvFlag{}
	)
	flag.Var(flinkConf, "flink-conf", "default Flink configuration key=value (repeatable), overridden by spec.flinkConfiguration")
	flag.Parse()

	lo, hi, err := flinkrunner.ParsePortRange(*portRange)
	if err != nil {
		klog.Fatal(err)
	}
	cfg, err := flinkrunner.RESTConfig(*kubeconfig, *kubeContext)
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	opts := flinkrunner.Options{
		Launch: flinkrunner.LaunchConfig{
			Java: *java, JavaOpts: strings.Fields(*javaOpts), MainClass: *mainClass,
			DefaultJar: *defaultJar, FlinkConf: flinkConf,
		},
		PortLo: lo, PortHi: hi, LogDir: *logDir, HealthAddr: *healthAddr,
		PollInterval: *poll, StopGrace: *stopGrace, DeletionTime: *deletion,
	}
	if *taskSlots >= 0 {
		opts.Launch.TaskSlots = taskSlots
	}
	if *pluginsDir != "" {
		opts.Env = append(opts.Env, "FLINK_PLUGINS_DIR="+*pluginsDir)
	}
	// Jobs deployed before resume from their latest completed checkpoint, read
	// from the store the jobs checkpoint to (the s3.* --flink-conf and the
	// AWS_* environment the Flink processes inherit; file:// directories too).
	opts.LastState = flinkrunner.LastStateFrom(&checkpoint.Store{
		S3: checkpoint.NewS3Client(checkpoint.S3Config{
			Endpoint: flinkConf["s3.endpoint"], Region: flinkConf["s3.region"],
			AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		}),
		AllowFile: true,
	})
	r, err := flinkrunner.New(cfg, opts)
	if err != nil {
		klog.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	klog.InfoS("flink-runner starting", "context", *kubeContext, "host", cfg.Host, "restPorts", *portRange,
		"defaultJar", *defaultJar, "logDir", *logDir)
	if err := r.Run(ctx); err != nil {
		klog.ErrorS(err, "flink-runner failed")
		os.Exit(1)
	}
	klog.InfoS("flink-runner stopped")
}
