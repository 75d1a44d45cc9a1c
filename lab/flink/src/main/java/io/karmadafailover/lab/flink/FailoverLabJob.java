package io.karmadafailover.lab.flink;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deterministic, checkpointed streaming job used to measure state loss across a failover.
 *
 * <p>Pipeline (parallelism 1 on purpose, see README "loss measurement"):
 *
 * <pre>
 *   DataGeneratorSource (0,1,2,... at --rate/s)  --keyBy(seq % keys)-->  SequenceStateFunction  -->  FileSink
 * </pre>
 *
 * <p>The sink is Flink's {@link FileSink} into {@code --output-dir}: one line per sequence number,
 * part files rolled on every checkpoint and committed (renamed from their hidden in-progress name)
 * only when that checkpoint completes. The committed part files are therefore the job's
 * exactly-once output across restarts and restores, which the lab's verifier reads
 * ({@code lab flink verify}): every sequence exactly once, whatever happened to the job. Without
 * {@code --output-dir} the records go to a {@code DiscardingSink}.
 *
 * <p>The checkpoint directory is NOT chosen here: it is read from the cluster configuration key
 * {@code state.checkpoints.dir} (or its 1.20 name {@code execution.checkpointing.dir}), i.e. from
 * the FlinkDeployment's {@code flinkConfiguration} on Kubernetes or from {@code --conf} when run
 * through {@link LocalRunner}.
 *
 * <p>Entry point for application mode (FlinkDeployment {@code spec.job.entryClass}): {@link #main}.
 */
public final class FailoverLabJob {

    private static final Logger LOG = LoggerFactory.getLogger(FailoverLabJob.class);

    /** Stable operator uids: restore maps state by uid, so these must never change. */
    public static final String SOURCE_UID = "datagen-sequence-source";
    public static final String STATE_UID = "sequence-state";
    public static final String SINK_UID = "discarding-sink";
    public static final String FILE_SINK_UID = "committed-sequence-sink";
    /** Committed part files are {@code part-<writer uuid>-<subtask>-<counter>.txt}. */
    public static final String PART_PREFIX = "part";
    public static final String PART_SUFFIX = ".txt";

    private FailoverLabJob() {}

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        build(env, options);
        env.execute(options.jobName());
    }

    /** Configures checkpointing on {@code env} and adds the pipeline to it. */
    public static void build(StreamExecutionEnvironment env, Options options) {
        ReadableConfig clusterConf = env.getConfiguration();
        // CHECKPOINTS_DIRECTORY = execution.checkpointing.dir, deprecated key state.checkpoints.dir.
        String checkpointDir = clusterConf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
        if (checkpointDir == null || checkpointDir.isBlank()) {
            throw new IllegalStateException(
                    "state.checkpoints.dir (execution.checkpointing.dir) is not set in the Flink "
                            + "configuration; this job is useless without durable checkpoints");
        }

        Configuration checkpointing = new Configuration();
        checkpointing.set(
                CheckpointingOptions.CHECKPOINTING_INTERVAL,
                Duration.ofMillis(options.checkpointIntervalMs()));
        checkpointing.set(
                CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, CheckpointingMode.EXACTLY_ONCE);
        checkpointing.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        checkpointing.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        checkpointing.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir);
        env.configure(checkpointing);
        // One source split and one state subtask: the sequence seen by SequenceStateFunction is
        // then gap-free and strictly increasing, which is what makes "lost = first - (restored+1)"
        // an exact measure.
        env.setParallelism(1);

        LOG.info(
                "JOB_CONFIG jobName={} rate={} keys={} checkpointIntervalMs={} checkpointDir={} outputDir={}",
                options.jobName(),
                options.rate(),
                options.keys(),
                options.checkpointIntervalMs(),
                checkpointDir,
                options.outputDir() == null ? "<discard>" : options.outputDir());

        GeneratorFunction<Long, Long> identity = index -> index;
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(
                        identity,
                        Long.MAX_VALUE,
                        RateLimiterStrategy.perSecond(options.rate()),
                        Types.LONG);

        final long keys = options.keys();
        DataStream<Long> sequence =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence-source")
                        .uid(SOURCE_UID)
                        .keyBy(seq -> seq % keys, Types.LONG)
                        .process(new SequenceStateFunction())
                        .name("sequence-state")
                        .uid(STATE_UID);
        if (options.outputDir() == null) {
            sequence.sinkTo(new DiscardingSink<>()).name("discard").uid(SINK_UID);
            return;
        }
        sequence.sinkTo(committedSink(options.outputDir())).name("committed-sequence").uid(FILE_SINK_UID);
    }

    /**
     * The exactly-once output: rows {@code <sequence>\n} in one bucket (the directory itself),
     * rolled on every checkpoint, so a part file is committed exactly when the checkpoint that
     * covers its records completes (and by the job restored from that checkpoint if this one dies
     * between completion and commit).
     */
    static FileSink<Long> committedSink(String outputDir) {
        return FileSink.forRowFormat(new Path(outputDir), new SimpleStringEncoder<Long>(StandardCharsets.UTF_8.name()))
                .withBucketAssigner(new BasePathBucketAssigner<>())
                .withRollingPolicy(OnCheckpointRollingPolicy.build())
                .withOutputFileConfig(
                        OutputFileConfig.builder().withPartPrefix(PART_PREFIX).withPartSuffix(PART_SUFFIX).build())
                .build();
    }

    /**
     * Job arguments: {@code --rate}, {@code --keys}, {@code --checkpoint-interval-ms}, {@code --job-name},
     * {@code --output-dir} (a directory URI Flink's recoverable writer supports, e.g. {@code file:///…};
     * null: discard the output).
     */
    public record Options(double rate, long keys, long checkpointIntervalMs, String jobName, String outputDir) {

        public static final double DEFAULT_RATE = 50;
        public static final long DEFAULT_KEYS = 8;
        public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 2000;
        public static final String DEFAULT_JOB_NAME = "failover-lab";

        public Options {
            if (!(rate > 0)) {
                throw new IllegalArgumentException("--rate must be > 0, got " + rate);
            }
            if (keys < 1) {
                throw new IllegalArgumentException("--keys must be >= 1, got " + keys);
            }
            if (checkpointIntervalMs < 10) {
                throw new IllegalArgumentException(
                        "--checkpoint-interval-ms must be >= 10, got " + checkpointIntervalMs);
            }
            Objects.requireNonNull(jobName, "jobName");
            if (outputDir != null && outputDir.isBlank()) {
                throw new IllegalArgumentException("--output-dir must not be empty");
            }
        }

        public static Options defaults() {
            return new Options(DEFAULT_RATE, DEFAULT_KEYS, DEFAULT_CHECKPOINT_INTERVAL_MS, DEFAULT_JOB_NAME, null);
        }

        /** Parses {@code --name value} or {@code --name=value}; unknown flags are an error. */
        public static Options parse(String... args) {
            double rate = DEFAULT_RATE;
            long keys = DEFAULT_KEYS;
            long interval = DEFAULT_CHECKPOINT_INTERVAL_MS;
            String jobName = DEFAULT_JOB_NAME;
            String outputDir = null;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                String name;
                String value;
                int eq = arg.indexOf('=');
                if (arg.startsWith("--") && eq > 0) {
                    name = arg.substring(2, eq);
                    value = arg.substring(eq + 1);
                } else if (arg.startsWith("--") && i + 1 < args.length) {
                    name = arg.substring(2);
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException("unexpected job argument: " + arg);
                }
                switch (name.toLowerCase(Locale.ROOT)) {
                    case "rate" -> rate = Double.parseDouble(value);
                    case "keys" -> keys = Long.parseLong(value);
                    case "checkpoint-interval-ms" -> interval = Long.parseLong(value);
                    case "job-name" -> jobName = value;
                    case "output-dir" -> outputDir = value;
                    default -> throw new IllegalArgumentException("unknown job argument: --" + name);
                }
            }
            return new Options(rate, keys, interval, jobName, outputDir);
        }
    }
}
