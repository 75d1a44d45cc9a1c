package io.karmadafailover.lab.flink;

import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * JVM-local copy of what {@link SequenceStateFunction} observes, for in-process tests.
 *
 * <p>Only meaningful when a single job with parallelism 1 runs in this JVM (MiniCluster / {@link
 * LocalRunner}). In a real cluster the operator lives in a TaskManager JVM: use the metrics or the
 * log lines instead. Production code never reads it.
 */
public final class LabProbe {

    private static volatile boolean restored;
    private static volatile long restoredMaxSequence = -1;
    private static volatile long firstSequenceAfterRestore = -1;
    private static volatile long maxSequence = -1;
    private static final ConcurrentSkipListMap<Long, Long> COMPLETED = new ConcurrentSkipListMap<>();

    private LabProbe() {}

    /** Clears all observations; call before starting a job. */
    public static void reset() {
        restored = false;
        restoredMaxSequence = -1;
        firstSequenceAfterRestore = -1;
        maxSequence = -1;
        COMPLETED.clear();
    }

    static void onInitialize(boolean wasRestored, long restoredMax) {
        restored = wasRestored;
        restoredMaxSequence = restoredMax;
        maxSequence = restoredMax;
    }

    static void onFirstSequence(long seq) {
        firstSequenceAfterRestore = seq;
    }

    static void onMaxSequence(long seq) {
        maxSequence = seq;
    }

    static void onCheckpointCompleted(long checkpointId, long coveredMaxSequence) {
        COMPLETED.put(checkpointId, coveredMaxSequence);
    }

    public static boolean restored() {
        return restored;
    }

    public static long restoredMaxSequence() {
        return restoredMaxSequence;
    }

    public static long firstSequenceAfterRestore() {
        return firstSequenceAfterRestore;
    }

    public static long maxSequence() {
        return maxSequence;
    }

    /** checkpointId -> maxSequence contained in that checkpoint, for completed checkpoints. */
    public static NavigableMap<Long, Long> completedCheckpoints() {
        return java.util.Collections.unmodifiableNavigableMap(COMPLETED);
    }
}
