package io.karmadafailover.lab.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.UUID;

import io.karmadafailover.lab.flink.s3.InMemoryS3Server;
import io.karmadafailover.lab.flink.s3.RealS3EndpointTest;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RestoreWithoutLossTest}'s scenario with {@code state.checkpoints.dir=s3://...}, i.e.
 * checkpoints written and restored through {@code LabS3FileSystem}: against the in-memory S3
 * always, and against a real endpoint when {@code LAB_S3_ENDPOINT} is set.
 */
class S3RestoreWithoutLossTest {

    private static final String BUCKET = "flink-checkpoints";

    private Path cleanupRoot;

    @AfterEach
    void resetFileSystems() throws Exception {
        if (cleanupRoot != null) {
            cleanupRoot.getFileSystem().delete(cleanupRoot, true);
        }
        FileSystem.initialize(new Configuration(), null);
    }

    @Test
    void restoresFromS3CheckpointWithoutLoss() throws Exception {
        try (InMemoryS3Server s3 = new InMemoryS3Server(1000, BUCKET)) {
            Configuration conf = new Configuration();
            conf.setString("s3.endpoint", s3.endpoint());
            conf.setString("s3.path.style.access", "true");
            conf.setString("s3.access-key", "lab");
            conf.setString("s3.secret-key", "lab-secret");

            Path chk = RestoreWithoutLossTest.runRestoreScenario(conf, "s3://" + BUCKET + "/lab-ns/restore-test");

            assertEquals("s3", chk.toUri().getScheme(), chk.toString());
            String metadataKey = chk.toUri().getPath().substring(1) + "/_metadata";
            assertTrue(s3.keys(BUCKET).contains(metadataKey), metadataKey + " in " + s3.keys(BUCKET));
            assertEquals(0, s3.chunkedUploads.get(), "uploads must not be aws-chunked");
            assertTrue(s3.requests.stream().noneMatch(r -> r.contains("unsupported") || r.contains("NoSuchBucket")),
                    s3.requests.stream().filter(r -> r.contains("unsupported") || r.contains("NoSuchBucket")).toList()
                            .toString());
        }
    }

    @Test
    void restoresFromRealS3EndpointWithoutLoss() throws Exception {
        Configuration conf = RealS3EndpointTest.confFromEnv();
        assumeTrue(conf != null, "LAB_S3_ENDPOINT not set");
        String root = "s3://" + RealS3EndpointTest.bucketFromEnv() + "/lab-restore-test-" + UUID.randomUUID();
        cleanupRoot = new Path(root);
        Path chk = RestoreWithoutLossTest.runRestoreScenario(conf, root);
        assertTrue(chk.toString().startsWith(root), chk.toString());
    }
}
