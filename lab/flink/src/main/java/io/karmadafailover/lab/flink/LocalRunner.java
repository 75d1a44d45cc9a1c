package io.karmadafailover.lab.flink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.core.plugin.PluginUtils;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@link FailoverLabJob} in a local MiniCluster, as a stand-in for the JobManager +
 * TaskManager pods that the Flink Kubernetes operator creates in application mode.
 *
 * <pre>
 * java [--add-opens ...] -cp failover-lab-flink-job.jar io.karmadafailover.lab.flink.LocalRunner \
 *     [--conf-file flink-conf.yaml] [--conf key=value]... [job args: --rate 50 --keys 8 ...]
 * </pre>
 *
 * <p>What it does, in order:
 *
 * <ol>
 *   <li>Builds a Flink {@link Configuration} from {@code --conf-file} ({@code key: value} lines)
 *       then {@code --conf key=value} (later wins).
 *   <li>Calls {@link FileSystem#initialize(Configuration, PluginManager)} <em>before</em> anything
 *       touches a file system. MiniCluster never does this itself, and Flink otherwise lazily
 *       initialises the file-system registry with an empty configuration, so {@code s3.*} keys
 *       would be ignored ("the MiniCluster S3 catch").
 *   <li>Pins the REST endpoint to {@code 127.0.0.1:rest.port} (default 8081) so {@code /jobs},
 *       {@code /jobs/<id>/checkpoints} can be queried.
 *   <li>Maps {@code taskmanager.numberOfTaskSlots: 0} to "no TaskManager at all" (a TaskExecutor
 *       refuses 0 slots), so the job is submitted but cannot be scheduled.
 *   <li>Submits the job; {@code execution.savepoint.path} / {@code execution.state-recovery.path}
 *       and {@code execution.savepoint.ignore-unclaimed-state} in the configuration select the
 *       snapshot to restore from (honoured by Flink's executor when it builds the JobGraph).
 * </ol>
 *
 * <p>{@link #main} blocks until the job ends, i.e. normally until the process is killed.
 */
public final class LocalRunner {

    private static final Logger LOG = LoggerFactory.getLogger(LocalRunner.class);

    public static final String DEFAULT_REST_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_REST_PORT = 8081;

    private LocalRunner() {}

    public static void main(String[] args) throws Exception {
        Invocation invocation = Invocation.parse(args);
        JobClient client = start(invocation.configuration(), invocation.jobArgs());
        try {
            client.getJobExecutionResult().get();
            LOG.info("JOB_FINISHED jobId={}", client.getJobID());
        } catch (Exception e) {
            LOG.error("JOB_ENDED_WITH_ERROR jobId={}", client.getJobID(), e);
            System.exit(1);
        }
    }

    /**
     * Starts a per-job MiniCluster running {@link FailoverLabJob} and returns once the job is
     * submitted. Cancelling the returned client (or the job ending) shuts the MiniCluster down.
     */
    public static JobClient start(Configuration userConf, String... jobArgs) throws Exception {
        FailoverLabJob.Options options = FailoverLabJob.Options.parse(jobArgs);
        Configuration conf = effectiveConfiguration(userConf);

        // The MiniCluster S3 catch: register file systems with *this* configuration (s3.endpoint,
        // s3.access-key, ...) and with any plugins found under $FLINK_PLUGINS_DIR (default
        // ./plugins). Factories on the classpath are found via ServiceLoader as well.
        PluginManager pluginManager = PluginUtils.createPluginManagerFromRootFolder(conf);
        FileSystem.initialize(conf, pluginManager);

        LOG.info(
                "LOCAL_RUNNER restAddress=http://{}:{} slots={} taskManagers={} savepointPath={} ignoreUnclaimedState={}",
                conf.get(RestOptions.ADDRESS),
                conf.get(RestOptions.BIND_PORT),
                conf.getOptional(TaskManagerOptions.NUM_TASK_SLOTS).map(String::valueOf).orElse("auto"),
                conf.get(TaskManagerOptions.MINI_CLUSTER_NUM_TASK_MANAGERS),
                conf.getOptional(StateRecoveryOptions.SAVEPOINT_PATH).orElse("<none>"),
                conf.get(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        FailoverLabJob.build(env, options);
        JobClient client = env.executeAsync(options.jobName());
        LOG.info(
                "JOB_SUBMITTED jobId={} jobName={} rest=http://{}:{}",
                client.getJobID(),
                options.jobName(),
                conf.get(RestOptions.ADDRESS),
                conf.get(RestOptions.BIND_PORT));
        return client;
    }

    /** Applies the local-runner defaults on top of a copy of {@code userConf}. */
    static Configuration effectiveConfiguration(Configuration userConf) {
        Configuration conf = new Configuration(userConf);
        if (!userConf.containsKey(RestOptions.ADDRESS.key())) {
            conf.set(RestOptions.ADDRESS, DEFAULT_REST_ADDRESS);
        }
        if (!userConf.containsKey(RestOptions.BIND_ADDRESS.key())) {
            conf.set(RestOptions.BIND_ADDRESS, DEFAULT_REST_ADDRESS);
        }
        // The per-job MiniCluster factory picks a random port unless rest.bind-port is set, so
        // always set it explicitly (from rest.port when that is what the user gave).
        if (!userConf.containsKey(RestOptions.BIND_PORT.key())) {
            int port = userConf.getOptional(RestOptions.PORT).orElse(DEFAULT_REST_PORT);
            conf.set(RestOptions.PORT, port);
            conf.set(RestOptions.BIND_PORT, String.valueOf(port));
        }
        // A TaskExecutor cannot have 0 slots. "0 slots" is therefore modelled as a MiniCluster with
        // no TaskManager: the JobManager side (dispatcher, REST, scheduler) runs, the job is
        // accepted but stays waiting for resources - like a FlinkDeployment whose TaskManager
        // pods cannot be scheduled.
        if (userConf.getOptional(TaskManagerOptions.NUM_TASK_SLOTS).orElse(-1) == 0) {
            conf.set(TaskManagerOptions.MINI_CLUSTER_NUM_TASK_MANAGERS, 0);
            conf.set(TaskManagerOptions.NUM_TASK_SLOTS, 1);
        }
        return conf;
    }

    /** Parsed command line: Flink configuration plus the remaining (job) arguments. */
    record Invocation(Configuration configuration, String[] jobArgs) {

        static Invocation parse(String... args) throws IOException {
            Configuration conf = new Configuration();
            List<String> jobArgs = new ArrayList<>();
            List<String[]> overrides = new ArrayList<>();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (arg.equals("--conf-file") || arg.startsWith("--conf-file=")) {
                    String path = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : next(args, ++i, arg);
                    conf.addAll(readConfFile(Path.of(path)));
                } else if (arg.equals("--conf") || arg.startsWith("--conf=")) {
                    String kv = arg.startsWith("--conf=") ? arg.substring("--conf=".length()) : next(args, ++i, arg);
                    int eq = kv.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--conf expects key=value, got: " + kv);
                    }
                    overrides.add(new String[] {kv.substring(0, eq).trim(), kv.substring(eq + 1).trim()});
                } else {
                    jobArgs.add(arg);
                }
            }
            // --conf always wins over --conf-file, whatever the order on the command line.
            for (String[] kv : overrides) {
                conf.setString(kv[0], kv[1]);
            }
            return new Invocation(conf, jobArgs.toArray(new String[0]));
        }

        private static String next(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }
    }

    /**
     * Reads flink-conf style {@code key: value} lines (flat keys only; {@code #} comments and
     * blank lines ignored; surrounding quotes on values removed).
     */
    static Configuration readConfFile(Path file) throws IOException {
        Configuration conf = new Configuration();
        int lineNo = 0;
        for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int sep = line.indexOf(": ");
            if (sep < 0 && line.endsWith(":")) {
                sep = line.length() - 1;
            }
            if (sep <= 0) {
                throw new IllegalArgumentException(
                        file + ":" + lineNo + ": expected 'key: value', got: " + raw);
            }
            String key = line.substring(0, sep).strip();
            String value = line.substring(sep + 1).strip();
            if (value.length() >= 2
                    && (value.startsWith("\"") && value.endsWith("\"")
                            || value.startsWith("'") && value.endsWith("'"))) {
                value = value.substring(1, value.length() - 1);
            }
            conf.setString(key, value);
        }
        return conf;
    }
}
