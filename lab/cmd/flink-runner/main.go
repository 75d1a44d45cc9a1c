// Command flink-runner is the lab's stand-in for flink-kubernetes-operator in
// one member cluster: it watches FlinkDeployments and runs each job in a Flink
// MiniCluster JVM instead of JobManager/TaskManager pods: a local process (the
// hermetic lab) or, with --job-image, a pod of its own in the member (the kind
// lab). See lab/flinkrunner/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

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
		healthAddr  = flag.String("health-addr", "", "address for /healthz, /readyz, /debug/jobs and /metrics (e.g. 127.0.0.1:24690; empty = off)")
		java        = flag.String("java", "java", "java binary")
		javaOpts    = flag.String("java-opts", "", "extra JVM flags, space separated (e.g. -Xmx512m)")
		mainClass   = flag.String("main-class", flinkrunner.DefaultMainClass, "main class run from the jar")
		pluginsDir  = flag.String("flink-plugins-dir", "", "FLINK_PLUGINS_DIR for the Flink processes (empty = inherit)")
		poll        = flag.Duration("poll-interval", 2*time.Second, "REST poll period per job")
		stopGrace   = flag.Duration("stop-grace", 20*time.Second, "SIGTERM -> SIGKILL grace when stopping a Flink process")
		deletion    = flag.Duration("deletion-time", 3*time.Second, "how long a deleted FlinkDeployment's job runs on before it is cancelled (or stopped with a savepoint) and its finalizer removed, as the operator's reaction and the JobManager's shutdown take; annotation "+flinkrunner.DeletionTimeAnnotation+" overrides it per object")
		flinkConf   = kvFlag{}
		jobImage    = flag.String("job-image", "", "run each job in a pod of its own in the member, from this image (a JVM and the lab's job jar at --default-jar); empty = a local process per job")
		hostPaths   = flag.String("job-host-paths", "", "with --job-image: comma-separated host directories mounted into every job pod at the same path (the committed-output folder)")
		secretEnv   = flag.String("job-secret-env", "AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY,AWS_SESSION_TOKEN", "with --job-image: variables of the runner's environment handed to the job pods through a Secret in each job's namespace ("+flinkrunner.CredentialsSecret+")")
		runAs       = flag.String("job-run-as", "", "with --job-image: UID[:GID] the job pods run as (the owner of --job-host-paths); empty = the image's user")
	)
	flag.Var(flinkConf, "flink-conf", "default Flink configuration key=value (repeatable), overridden by spec.flinkConfiguration")
	flag.Parse()
	// controller-runtime (the runner's manager) logs through klog as the runner does.
	ctrllog.SetLogger(klog.NewKlogr())

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
	if *jobImage != "" {
		ex, err := podExecutor(cfg, *jobImage, *hostPaths, *secretEnv, *runAs, *stopGrace)
		if err != nil {
			klog.Fatal(err)
		}
		opts.Executor = ex
		// The jar is the job image's: the only local jar a spec may name.
		jar := *defaultJar
		opts.Launch.FileExists = func(p string) bool { return p == jar }
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
		"defaultJar", *defaultJar, "logDir", *logDir, "jobImage", *jobImage)
	if err := r.Run(ctx); err != nil {
		klog.ErrorS(err, "flink-runner failed")
		os.Exit(1)
	}
	klog.InfoS("flink-runner stopped")
}

// podExecutor is the executor of --job-image: each job in a pod of its own.
func podExecutor(cfg *rest.Config, image, hostPaths, secretEnv, runAs string, grace time.Duration) (*flinkrunner.PodExecutor, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ex := &flinkrunner.PodExecutor{Kube: kube, Image: image, Grace: grace, SecretEnv: map[string]string{}}
	for _, p := range strings.Split(hostPaths, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("--job-host-paths: %q is not an absolute path", p)
			}
			ex.HostPaths = append(ex.HostPaths, p)
		}
	}
	for _, k := range strings.Split(secretEnv, ",") {
		if k = strings.TrimSpace(k); k != "" && os.Getenv(k) != "" {
			ex.SecretEnv[k] = os.Getenv(k)
		}
	}
	if runAs != "" {
		uid, gid, hasGID := strings.Cut(runAs, ":")
		u, err := strconv.ParseInt(uid, 10, 64)
		if err != nil || u < 0 {
			return nil, fmt.Errorf("--job-run-as %q: want UID[:GID]", runAs)
		}
		ex.RunAsUser = &u
		if hasGID {
			g, err := strconv.ParseInt(gid, 10, 64)
			if err != nil || g < 0 {
				return nil, fmt.Errorf("--job-run-as %q: want UID[:GID]", runAs)
			}
			ex.RunAsGroup = &g
		}
	}
	return ex, nil
}
