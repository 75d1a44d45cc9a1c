package io.karmadafailover.lab.flink.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.util.List;
import java.util.UUID;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link LabS3FileSystem} against a real S3-compatible endpoint (SeaweedFS, MinIO, ...). Skipped
 * unless {@code LAB_S3_ENDPOINT} is set; also reads {@code LAB_S3_ACCESS_KEY},
 * {@code LAB_S3_SECRET_KEY}, {@code LAB_S3_BUCKET} (default {@code flink-checkpoints}, must exist)
 * and {@code LAB_S3_REGION} (default us-east-1). Works under a unique prefix and deletes it.
 */
public class RealS3EndpointTest {

    /** Flink configuration for the endpoint in the environment, or {@code null} if none is given. */
    public static Configuration confFromEnv() {
        String endpoint = System.getenv("LAB_S3_ENDPOINT");
        if (endpoint == null || endpoint.isBlank()) {
            return null;
        }
        Configuration conf = new Configuration();
        conf.setString("s3.endpoint", endpoint);
        conf.setString("s3.path.style.access", "true");
        setIfPresent(conf, "s3.access-key", "LAB_S3_ACCESS_KEY");
        setIfPresent(conf, "s3.secret-key", "LAB_S3_SECRET_KEY");
        setIfPresent(conf, "s3.region", "LAB_S3_REGION");
        return conf;
    }

    public static String bucketFromEnv() {
        String b = System.getenv("LAB_S3_BUCKET");
        return b == null || b.isBlank() ? "flink-checkpoints" : b;
    }

    private static void setIfPresent(Configuration conf, String key, String env) {
        String v = System.getenv(env);
        if (v != null && !v.isBlank()) {
            conf.setString(key, v);
        }
    }

    private Path base;

    @AfterEach
    void cleanup() throws Exception {
        if (base != null) {
            base.getFileSystem().delete(base, true);
        }
        FileSystem.initialize(new Configuration(), null);
    }

    @Test
    void roundTripAgainstRealEndpoint() throws Exception {
        Configuration conf = confFromEnv();
        assumeTrue(conf != null, "LAB_S3_ENDPOINT not set");
        FileSystem.initialize(conf, null);
        base = new Path("s3://" + bucketFromEnv() + "/lab-s3-test-" + UUID.randomUUID());
        FileSystem fs = FileSystem.get(base.toUri());
        assertInstanceOf(LabS3FileSystem.class, fs);

        Path file = new Path(base, "dir/file.txt");
        LabS3FileSystemTest.write(fs, file, "hello s3");
        assertEquals("hello s3", LabS3FileSystemTest.read(fs, file));
        assertEquals(8, fs.getFileStatus(file).getLen());
        assertTrue(fs.getFileStatus(new Path(base, "dir")).isDir());
        LabS3FileSystemTest.write(fs, new Path(base, "dir/sub/x"), "x");
        assertEquals(List.of("file.txt", "sub/"), LabS3FileSystemTest.names(fs.listStatus(new Path(base, "dir"))));
        assertTrue(fs.rename(file, new Path(base, "dir/renamed.txt")));
        assertFalse(fs.exists(file));
        assertTrue(fs.delete(new Path(base, "dir"), true));
        assertFalse(fs.exists(new Path(base, "dir")));
        assertEquals(URI.create("s3://" + bucketFromEnv() + "/"), fs.getUri());
    }
}
