package io.karmadafailover.lab.flink;

import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps per-key {@code (count, maxSequence)} in keyed ValueState plus the subtask-wide highest
 * sequence in operator (union list) state, and exposes what is needed to measure loss on restore.
 *
 * <p>Metrics (operator scope, gauges): {@code maxSequence}, {@code firstSequenceAfterRestore}
 * (first sequence processed since this task started, -1 before any), {@code restoredMaxSequence}
 * (maxSequence found in restored state, -1 on a fresh start), {@code sequenceGaps} (number of
 * times a record was not previous+1 within this run; must stay 0), {@code lastCompletedCheckpointId}.
 *
 * <p>Log lines (one per event, machine-parsable):
 *
 * <ul>
 *   <li>{@code RESTORED restoredMaxSequence=<n>} from initializeState when restored,
 *   <li>{@code FIRST_SEQUENCE firstSequenceAfterRestore=<n> restoredMaxSequence=<m> lost=<n-(m+1)>},
 *   <li>{@code CHECKPOINT_COMPLETED checkpointId=<id> maxSequence=<n>} where n is the value the
 *       checkpoint <em>contains</em> (captured in snapshotState), not the current value.
 * </ul>
 */
public class SequenceStateFunction extends KeyedProcessFunction<Long, Long, Long>
        implements CheckpointedFunction, CheckpointListener {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SequenceStateFunction.class);

    /** Keyed: (count, maxSequence) per key. */
    private transient ValueState<Tuple2<Long, Long>> perKey;
    /** Operator state (union, so a rescale still sees the global max): highest sequence seen. */
    private transient ListState<Long> globalMax;

    // Written by the task thread, read by the metrics thread -> volatile.
    private transient volatile long maxSequence;
    private transient volatile long restoredMaxSequence;
    private transient volatile long firstSequenceAfterRestore;
    private transient volatile long sequenceGaps;
    private transient volatile long lastCompletedCheckpointId;

    private transient long previousSequence;
    /** checkpointId -> maxSequence captured at snapshot time, until the checkpoint completes. */
    private transient TreeMap<Long, Long> pendingCheckpoints;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        globalMax =
                context.getOperatorStateStore()
                        .getUnionListState(new ListStateDescriptor<>("global-max-sequence", Types.LONG));
        pendingCheckpoints = new TreeMap<>();
        firstSequenceAfterRestore = -1;
        previousSequence = -1;
        sequenceGaps = 0;
        lastCompletedCheckpointId = -1;
        restoredMaxSequence = -1;
        if (context.isRestored()) {
            for (Long v : globalMax.get()) {
                restoredMaxSequence = Math.max(restoredMaxSequence, v);
            }
            LOG.info("RESTORED restoredMaxSequence={}", restoredMaxSequence);
        }
        maxSequence = restoredMaxSequence;
        LabProbe.onInitialize(context.isRestored(), restoredMaxSequence);
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        perKey =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        "count-and-max", Types.TUPLE(Types.LONG, Types.LONG)));
        MetricGroup metrics = getRuntimeContext().getMetricGroup();
        metrics.gauge("maxSequence", (Gauge<Long>) () -> maxSequence);
        metrics.gauge("firstSequenceAfterRestore", (Gauge<Long>) () -> firstSequenceAfterRestore);
        metrics.gauge("restoredMaxSequence", (Gauge<Long>) () -> restoredMaxSequence);
        metrics.gauge("sequenceGaps", (Gauge<Long>) () -> sequenceGaps);
        metrics.gauge("lastCompletedCheckpointId", (Gauge<Long>) () -> lastCompletedCheckpointId);
    }

    @Override
    public void processElement(Long seq, Context ctx, Collector<Long> out) throws Exception {
        if (firstSequenceAfterRestore < 0) {
            firstSequenceAfterRestore = seq;
            LOG.info(
                    "FIRST_SEQUENCE firstSequenceAfterRestore={} restoredMaxSequence={} lost={}",
                    seq,
                    restoredMaxSequence,
                    seq - (restoredMaxSequence + 1));
            LabProbe.onFirstSequence(seq);
        } else if (seq != previousSequence + 1) {
            sequenceGaps++;
            LOG.warn("SEQUENCE_GAP previous={} current={}", previousSequence, seq);
        }
        previousSequence = seq;

        Tuple2<Long, Long> stats = perKey.value();
        if (stats == null) {
            stats = Tuple2.of(0L, -1L);
        }
        stats.f0 = stats.f0 + 1;
        stats.f1 = Math.max(stats.f1, seq);
        perKey.update(stats);

        if (seq > maxSequence) {
            maxSequence = seq;
            LabProbe.onMaxSequence(seq);
        }
        out.collect(seq);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        long snapshotMax = maxSequence;
        globalMax.update(java.util.List.of(snapshotMax));
        pendingCheckpoints.put(context.getCheckpointId(), snapshotMax);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        Long covered = pendingCheckpoints.get(checkpointId);
        // Completing checkpoint N subsumes every earlier pending one.
        Iterator<Map.Entry<Long, Long>> it = pendingCheckpoints.entrySet().iterator();
        while (it.hasNext() && it.next().getKey() <= checkpointId) {
            it.remove();
        }
        if (covered == null) {
            // e.g. notification for a checkpoint snapshotted before a restart of this task.
            return;
        }
        lastCompletedCheckpointId = checkpointId;
        LOG.info("CHECKPOINT_COMPLETED checkpointId={} maxSequence={}", checkpointId, covered);
        LabProbe.onCheckpointCompleted(checkpointId, covered);
    }
}
