package io.karmadafailover.lab.flink.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link LabS3FileSystem} against {@link InMemoryS3Server} (list pages capped at 2 keys). */
class LabS3FileSystemTest {

    static final String BUCKET = "lab-bucket";
    static InMemoryS3Server server;
    static FileSystem fs;

    @BeforeAll
    static void start() throws Exception {
        server = new InMemoryS3Server(2, BUCKET);
        FileSystem.initialize(s3Conf(server.endpoint()), null);
        fs = FileSystem.get(URI.create("s3://" + BUCKET + "/x"));
    }

    @AfterAll
    static void stop() {
        FileSystem.initialize(new Configuration(), null);
        if (server != null) {
            server.close();
        }
    }

    static Configuration s3Conf(String endpoint) {
        Configuration conf = new Configuration();
        conf.setString("s3.endpoint", endpoint);
        conf.setString("s3.path.style.access", "true");
        conf.setString("s3.access-key", "test-access");
        conf.setString("s3.secret-key", "test-secret");
        return conf;
    }

    static Path p(String key) {
        return new Path("s3://" + BUCKET + "/" + key);
    }

    static void write(FileSystem fs, Path path, String content) throws IOException {
        try (FSDataOutputStream out = fs.create(path, WriteMode.OVERWRITE)) {
            out.write(content.getBytes(StandardCharsets.UTF_8));
        }
    }

    static String read(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static List<String> names(FileStatus[] statuses) {
        return Arrays.stream(statuses)
                .map(s -> s.getPath().getName() + (s.isDir() ? "/" : ""))
                .sorted()
                .collect(Collectors.toList());
    }

    @Test
    void factoryIsFoundThroughServiceLoader() throws Exception {
        assertInstanceOf(LabS3FileSystem.class, fs);
        assertEquals(URI.create("s3://" + BUCKET + "/"), fs.getUri());
        assertEquals(p(""), fs.getWorkingDirectory());
        assertEquals(p(""), fs.getHomeDirectory());
        assertTrue(fs.isDistributedFS());
        assertEquals(FileSystemKind.OBJECT_STORE, fs.getKind());
        // Path.getFileSystem() goes through the same registry.
        assertInstanceOf(LabS3FileSystem.class, new Path("s3://other-bucket/a").getFileSystem());
    }

    @Test
    void createOpenSeekAndStatus() throws Exception {
        Path file = p("t1/dir/file.bin");
        byte[] data = "0123456789abcdef".getBytes(StandardCharsets.UTF_8);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data, 0, 10);
            out.flush();
            out.sync();
            assertFalse(fs.exists(file), "nothing is visible before close()");
            out.write(data, 10, 6);
            assertEquals(16, out.getPos());
        }
        assertTrue(fs.exists(file));
        assertThrows(FileAlreadyExistsException.class, () -> fs.create(file, WriteMode.NO_OVERWRITE));

        FileStatus st = fs.getFileStatus(file);
        assertFalse(st.isDir());
        assertEquals(16, st.getLen());
        assertEquals(file, st.getPath());
        assertTrue(st.getModificationTime() > 0);
        assertEquals(1, fs.getFileBlockLocations(st, 0, 16).length);

        try (FSDataInputStream in = fs.open(file)) {
            assertEquals('0', in.read());
            assertEquals(1, in.getPos());
            in.seek(10);
            byte[] buf = new byte[10];
            assertEquals(6, in.read(buf, 0, 10));
            assertEquals("abcdef", new String(buf, 0, 6, StandardCharsets.UTF_8));
            assertEquals(-1, in.read());
            in.seek(0);
            assertArrayEquals(data, in.readAllBytes());
        }

        assertTrue(fs.getFileStatus(p("t1/dir")).isDir());
        assertTrue(fs.getFileStatus(p("t1")).isDir());
        assertTrue(fs.getFileStatus(p("")).isDir());
        assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(p("t1/nope")));
        assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(p("t1/di")));
        assertThrows(FileNotFoundException.class, () -> fs.open(p("t1/nope")));
        assertTrue(fs.mkdirs(p("t1/new/dir")));

        // overwrite + special characters in keys
        Path odd = p("t1/dir/a b+c=d&e.txt");
        write(fs, odd, "v1");
        write(fs, odd, "v2");
        assertEquals("v2", read(fs, odd));
        assertEquals(List.of("a b+c=d&e.txt", "file.bin"), names(fs.listStatus(p("t1/dir"))));
        assertEquals(0, server.chunkedUploads.get(), "client must send plain (not aws-chunked) bodies");
    }

    @Test
    void listStatusPagesAndReportsPrefixesAsDirectories() throws Exception {
        for (String k : List.of("t2/a", "t2/b", "t2/c/x", "t2/c/y", "t2/d", "t2/e/f/g", "t2x/other")) {
            write(fs, p(k), k);
        }
        long listsBefore = server.requests.stream().filter(r -> r.endsWith("ListObjectsV2")).count();
        FileStatus[] st = fs.listStatus(p("t2"));
        long lists = server.requests.stream().filter(r -> r.endsWith("ListObjectsV2")).count() - listsBefore;
        assertEquals(List.of("a", "b", "c/", "d", "e/"), names(st));
        assertEquals(3, lists, "5 entries with 2 per page = 3 pages");
        for (FileStatus s : st) {
            assertEquals(s.getPath().getName().length() == 1 && !s.isDir() ? 4 : 0, s.getLen(), s.getPath().toString());
        }
        assertEquals(p("t2/c"), Arrays.stream(st).filter(FileStatus::isDir).findFirst().orElseThrow().getPath());
        assertEquals(List.of("a"), names(fs.listStatus(p("t2/a"))), "a file lists as itself");
        assertEquals(0, fs.listStatus(p("t2/none")).length);
        assertTrue(names(fs.listStatus(p(""))).containsAll(List.of("t2/", "t2x/")));
    }

    @Test
    void deleteFilesAndDirectories() throws Exception {
        for (int i = 0; i < 7; i++) {
            write(fs, p("t3/chk-1/f" + i), "x");
        }
        write(fs, p("t3/chk-1/sub/g"), "x");
        write(fs, p("t3/keep"), "x");

        assertTrue(fs.delete(p("t3/chk-1/f0"), false));
        assertFalse(fs.exists(p("t3/chk-1/f0")));
        assertFalse(fs.delete(p("t3/chk-1/f0"), false), "already gone");
        assertThrows(IOException.class, () -> fs.delete(p("t3/chk-1"), false), "non-empty, not recursive");

        assertTrue(fs.delete(p("t3/chk-1"), true));
        assertFalse(fs.exists(p("t3/chk-1")));
        assertEquals(List.of("t3/keep"), server.keys(BUCKET).stream().filter(k -> k.startsWith("t3/")).toList());
        assertFalse(fs.delete(p("t3/chk-1"), false), "empty dir is gone");
        assertThrows(IOException.class, () -> fs.delete(p(""), true), "bucket root");
    }

    @Test
    void renameFilesAndDirectories() throws Exception {
        write(fs, p("t4/src.txt"), "hello");
        assertTrue(fs.rename(p("t4/src.txt"), p("t4/dst.txt")));
        assertFalse(fs.exists(p("t4/src.txt")));
        assertEquals("hello", read(fs, p("t4/dst.txt")));

        write(fs, p("t4/d1/a"), "A");
        write(fs, p("t4/d1/b/c"), "C");
        assertTrue(fs.rename(p("t4/d1"), p("t4/d2")));
        assertFalse(fs.exists(p("t4/d1")));
        assertEquals("A", read(fs, p("t4/d2/a")));
        assertEquals("C", read(fs, p("t4/d2/b/c")));
        assertFalse(fs.rename(p("t4/missing"), p("t4/x")));
    }

    @Test
    void largeWritesSpillToATempFile() throws Exception {
        try (var client = LabS3FileSystemFactory.buildClient(
                LabS3FileSystemFactory.Settings.from(s3Conf(server.endpoint())))) {
            LabS3FileSystem small = new LabS3FileSystem(BUCKET, client, 1000);
            byte[] data = new byte[5000];
            new Random(42).nextBytes(data);
            try (FSDataOutputStream out = small.create(p("t5/big"), WriteMode.NO_OVERWRITE)) {
                out.write(data, 0, 600);
                out.write(data, 600, 4400); // crosses the threshold
                assertEquals(5000, out.getPos());
            }
            try (FSDataInputStream in = small.open(p("t5/big"))) {
                assertArrayEquals(data, in.readAllBytes());
            }
        }
    }

    @Test
    void wrongBucketOrSchemeIsRejected() {
        LabS3FileSystem s3fs = (LabS3FileSystem) fs;
        assertThrows(IllegalArgumentException.class, () -> s3fs.keyOf(new Path("s3://another/x")));
        assertThrows(IllegalArgumentException.class, () -> s3fs.keyOf(new Path("file:///tmp/x")));
        assertEquals("a/b", s3fs.keyOf(new Path("/a/b/")));
    }
}
