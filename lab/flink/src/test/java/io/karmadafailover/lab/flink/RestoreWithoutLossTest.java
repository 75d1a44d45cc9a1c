package io.karmadafailover.lab.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End-to-end restore check on a local MiniCluster with a file:// checkpoint directory (the same
 * scenario against s3:// is {@link S3RestoreWithoutLossTest}):
 * run 1 (fresh) -> >= 2 completed checkpoints -> cancel (checkpoints retained) -> pick the newest
 * chk-N with _metadata -> run 2 with execution.savepoint.path=chk-N -> no sequence lost, and the
 * committed output of both runs (FileSink) holds every sequence up to its highest exactly once.
 */
class RestoreWithoutLossTest {

    private static final String[] JOB_ARGS = {
        "--rate", "200", "--keys", "4", "--checkpoint-interval-ms", "300", "--job-name", "restore-test"
    };
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir Path checkpointRoot;
    @TempDir Path outputRoot;

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void restoresFromRetainedCheckpointWithoutLoss() throws Exception {
        runRestoreScenario(new Configuration(), checkpointRoot.toUri().toString(), outputRoot);
    }

    /**
     * The committed part files, read the way the lab's verifier reads them: files whose name starts
     * with '.' are in progress or pending (not committed) and do not count.
     */
    static void assertCommittedExactlyOnce(Path outputDir, long atLeast) throws IOException {
        java.util.Map<Long, Integer> seen = new java.util.HashMap<>();
        long max = -1;
        int files = 0;
        try (var paths = Files.list(outputDir)) {
            for (Path file : (Iterable<Path>) paths::iterator) {
                String name = file.getFileName().toString();
                if (name.startsWith(".")) {
                    continue;
                }
                assertTrue(name.startsWith(FailoverLabJob.PART_PREFIX + "-") && name.endsWith(FailoverLabJob.PART_SUFFIX), name);
                files++;
                for (String line : Files.readAllLines(file)) {
                    long seq = Long.parseLong(line);
                    seen.merge(seq, 1, Integer::sum);
                    max = Math.max(max, seq);
                }
            }
        }
        assertTrue(files >= 2, "committed part files: " + files);
        assertTrue(max >= atLeast, "highest committed sequence " + max + " < " + atLeast);
        for (long seq = 0; seq <= max; seq++) {
            Integer n = seen.get(seq);
            assertEquals(1, n == null ? 0 : n, "times sequence " + seq + " was committed");
        }
    }

    /**
     * The whole scenario for any checkpoint root Flink can resolve ({@code file://}, {@code s3://}):
     * {@code baseConf} carries file-system settings (e.g. {@code s3.endpoint}); the newest
     * {@code chk-N} is found by listing through Flink's {@link FileSystem}. Returns chk-N.
     */
    static org.apache.flink.core.fs.Path runRestoreScenario(Configuration baseConf, String checkpointRootUri)
            throws Exception {
        return runRestoreScenario(baseConf, checkpointRootUri, null);
    }

    /** As above; with outputDir the job writes its committed output there and the test checks it. */
    static org.apache.flink.core.fs.Path runRestoreScenario(
            Configuration baseConf, String checkpointRootUri, Path outputDir) throws Exception {
        String[] jobArgs = JOB_ARGS;
        if (outputDir != null) {
            jobArgs = java.util.Arrays.copyOf(JOB_ARGS, JOB_ARGS.length + 2);
            jobArgs[JOB_ARGS.length] = "--output-dir";
            jobArgs[JOB_ARGS.length + 1] = outputDir.toUri().toString();
        }
        // ---- run 1: fresh start (also the negative control: nothing restored) ----
        LabProbe.reset();
        int restPort1 = freePort();
        Configuration conf = new Configuration(baseConf);
        conf.setString("state.checkpoints.dir", checkpointRootUri);
        conf.setString("rest.port", String.valueOf(restPort1));
        JobClient run1 = LocalRunner.start(conf, jobArgs);
        JobID jobId1 = run1.getJobID();

        try {
            await("2 completed checkpoints in run 1", () -> LabProbe.completedCheckpoints().size() >= 2);
            assertFalse(LabProbe.restored(), "fresh start must not report a restore");
            assertEquals(-1, LabProbe.restoredMaxSequence(), "fresh start: restoredMaxSequence");
            assertEquals(0, LabProbe.firstSequenceAfterRestore(), "fresh start begins at sequence 0");
            // The REST endpoint of the MiniCluster answers on the configured port.
            String overview = get(restPort1, "/jobs/overview");
            assertTrue(overview.contains(jobId1.toHexString()), overview);
            String checkpoints1 = get(restPort1, "/jobs/" + jobId1 + "/checkpoints");
            assertTrue(checkpoints1.contains("\"completed\""), checkpoints1);
        } finally {
            cancelAndWait(run1);
        }
        var completedInRun1 = LabProbe.completedCheckpoints();

        // ---- pick the newest retained checkpoint that has _metadata ----
        org.apache.flink.core.fs.Path jobDir =
                new org.apache.flink.core.fs.Path(new org.apache.flink.core.fs.Path(checkpointRootUri), jobId1.toHexString());
        org.apache.flink.core.fs.Path chk = latestCompletedCheckpoint(jobDir)
                .orElseThrow(() -> new AssertionError("no chk-N/_metadata under " + jobDir));
        long chkId = Long.parseLong(chk.getName().substring("chk-".length()));

        // ---- run 2: restore from that checkpoint ----
        LabProbe.reset();
        int restPort2 = freePort();
        Configuration restoreConf = new Configuration(conf);
        restoreConf.setString("rest.port", String.valueOf(restPort2));
        restoreConf.setString("execution.savepoint.path", chk.toString());
        restoreConf.setString("execution.savepoint.ignore-unclaimed-state", "false");
        JobClient run2 = LocalRunner.start(restoreConf, jobArgs);
        try {
            await("processing resumed in run 2", () -> LabProbe.firstSequenceAfterRestore() >= 0);

            long restored = LabProbe.restoredMaxSequence();
            long first = LabProbe.firstSequenceAfterRestore();
            assertTrue(LabProbe.restored(), "run 2 must report a restore");
            assertTrue(restored >= 0, "restoredMaxSequence must be >= 0, was " + restored);
            assertEquals(restored + 1, first, "lost = first - (restored + 1) must be 0");
            // If run 1 saw the completion notification for chk-N, the restored value must be the
            // maxSequence that checkpoint was logged with.
            Long expected = completedInRun1.get(chkId);
            if (expected != null) {
                assertEquals(expected.longValue(), restored, "restored value of chk-" + chkId);
            }
            // Flink itself reports the restore source.
            await("REST shows restored checkpoint", () -> {
                String body = getQuietly(restPort2, "/jobs/" + run2.getJobID() + "/checkpoints");
                return body.contains("\"restored\":{") && body.contains("chk-" + chkId);
            });
            // Two checkpoints of run 2 commit its output past what run 1 had processed.
            await("2 completed checkpoints in run 2", () -> LabProbe.completedCheckpoints().size() >= 2);
        } finally {
            cancelAndWait(run2);
        }
        if (outputDir != null) {
            assertCommittedExactlyOnce(outputDir, LabProbe.restoredMaxSequence() + 1);
        }
        return chk;
    }

    @Test
    void confFileAndOverridesAreParsed() throws Exception {
        Path file = checkpointRoot.resolve("flink-conf.yaml");
        Files.writeString(file, "# comment\nstate.checkpoints.dir: \"file:///x\"\nrest.port: 1234\n\n");
        LocalRunner.Invocation inv = LocalRunner.Invocation.parse(
                "--conf", "rest.port=4321", "--conf-file", file.toString(), "--rate", "7");
        assertEquals("file:///x", inv.configuration().toMap().get("state.checkpoints.dir"));
        assertEquals("4321", inv.configuration().toMap().get("rest.port"));
        assertEquals(7.0, FailoverLabJob.Options.parse(inv.jobArgs()).rate());

        Configuration zeroSlots = new Configuration();
        zeroSlots.setString("taskmanager.numberOfTaskSlots", "0");
        Configuration eff = LocalRunner.effectiveConfiguration(zeroSlots);
        assertEquals(0, eff.get(TaskManagerOptions.MINI_CLUSTER_NUM_TASK_MANAGERS));
        assertEquals("8081", eff.get(RestOptions.BIND_PORT));
        assertEquals("127.0.0.1", eff.get(RestOptions.BIND_ADDRESS));
    }

    // ---------------------------------------------------------------------------------------

    /**
     * Highest N such that jobDir/chk-N/_metadata exists (Flink's e2e "latest completed checkpoint"),
     * listed through Flink's {@link FileSystem}, so it works for file:// and s3:// alike.
     */
    static Optional<org.apache.flink.core.fs.Path> latestCompletedCheckpoint(org.apache.flink.core.fs.Path jobDir)
            throws IOException {
        FileSystem fs = jobDir.getFileSystem();
        FileStatus[] children = fs.listStatus(jobDir); // LocalFileSystem: null if missing
        if (children == null) {
            return Optional.empty();
        }
        org.apache.flink.core.fs.Path best = null;
        long bestId = -1;
        for (FileStatus child : children) {
            String name = child.getPath().getName();
            if (child.isDir() && name.matches("chk-\\d+")
                    && fs.exists(new org.apache.flink.core.fs.Path(child.getPath(), "_metadata"))) {
                long id = Long.parseLong(name.substring(4));
                if (id > bestId) {
                    bestId = id;
                    best = child.getPath();
                }
            }
        }
        return Optional.ofNullable(best);
    }

    private static void cancelAndWait(JobClient client) throws Exception {
        client.cancel().get(30, TimeUnit.SECONDS);
        try {
            client.getJobExecutionResult().get(30, TimeUnit.SECONDS);
        } catch (Exception expected) {
            // a cancelled job completes its result future exceptionally
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(100);
        }
        fail("timed out waiting for: " + what);
    }

    private static String get(int port, String path) throws Exception {
        HttpResponse<String> resp = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode(), path + " -> " + resp.body());
        assertNotNull(resp.body());
        return resp.body();
    }

    private static String getQuietly(int port, String path) {
        try {
            return get(port, path);
        } catch (Throwable t) {
            return "";
        }
    }

    /**
     * A port free now, below Linux's ephemeral range (32768+): a port the kernel hands out
     * for bind(0) is also one it may give the next outgoing connection (the MiniCluster's own
     * RPC and blob connections, made before its REST endpoint binds), which then takes it.
     * Ports of 28000-32767 are never taken that way; the hermetic and kind labs use 24xxx-27xxx.
     */
    private static int freePort() throws IOException {
        java.util.Random random = new java.util.Random();
        IOException last = null;
        for (int i = 0; i < 100; i++) {
            int port = 28000 + random.nextInt(32768 - 28000);
            try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("no free port in 28000-32767 after 100 tries", last);
    }
}
