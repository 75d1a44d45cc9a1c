package io.karmadafailover.lab.flink.s3;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalBlockLocation;

import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A deliberately small Flink {@link FileSystem} over one S3 bucket (AWS SDK v2), the lab's stand-in
 * for {@code flink-s3-fs-presto} (see {@link LabS3FileSystemFactory}). Enough for Flink's
 * {@code filesystem} checkpoint storage: create / open / getFileStatus / listStatus / delete.
 *
 * <p>Model: {@code s3://bucket/a/b} is object key {@code a/b}. Directories are implicit key
 * prefixes ({@code a/}); {@link #mkdirs} is a no-op, so an "empty directory" does not exist. A
 * {@code a/} "directory marker" object, if some other tool created one, is treated as a directory.
 *
 * <p>Limits (by design, checkpoint files are small):
 *
 * <ul>
 *   <li>{@link #open} downloads the whole object into memory (one GetObject);
 *   <li>{@link #create} buffers in memory (spilling to a temp file above {@value #SPILL_THRESHOLD}
 *       bytes) and uploads with a single PutObject on {@code close()}: nothing is visible before
 *       close, {@code flush()}/{@code sync()} do nothing, objects are limited to 5 GiB (no multipart);
 *   <li>{@link #rename} is copy + delete per object (not atomic; CopyObject limit 5 GiB);
 *   <li>{@code NO_OVERWRITE} is check-then-put (not atomic);
 *   <li>no {@code RecoverableWriter} (no FileSink / StreamingFileSink to s3://; Flink's checkpoint
 *       metadata writer falls back to {@link #create}, logging "Cannot create recoverable writer").
 * </ul>
 */
public final class LabS3FileSystem extends FileSystem {

    static final int SPILL_THRESHOLD = 16 * 1024 * 1024;
    private static final int DELETE_BATCH = 1000;
    private static final long BLOCK_SIZE = 32L * 1024 * 1024;

    private final String bucket;
    private final S3Client s3;
    private final URI uri;
    private final Path root;
    private final int spillThreshold;

    public LabS3FileSystem(String bucket, S3Client s3) {
        this(bucket, s3, SPILL_THRESHOLD);
    }

    LabS3FileSystem(String bucket, S3Client s3, int spillThreshold) {
        this.spillThreshold = spillThreshold;
        this.bucket = bucket;
        this.s3 = s3;
        this.uri = URI.create(LabS3FileSystemFactory.SCHEME + "://" + bucket + "/");
        this.root = new Path(uri);
    }

    // ------------------------------------------------------------------------------- identity

    @Override
    public URI getUri() {
        return uri;
    }

    @Override
    public Path getWorkingDirectory() {
        return root;
    }

    @Override
    public Path getHomeDirectory() {
        return root;
    }

    @Override
    public boolean isDistributedFS() {
        return true;
    }

    @Override
    public FileSystemKind getKind() {
        return FileSystemKind.OBJECT_STORE;
    }

    // -------------------------------------------------------------------------------- reading

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        String key = keyOf(path);
        Path qualified = qualify(key);
        if (key.isEmpty()) {
            return Status.dir(qualified);
        }
        HeadObjectResponse head = head(key);
        if (head != null) {
            return Status.file(qualified, head.contentLength(), millis(head.lastModified()));
        }
        if (hasChildren(key + "/")) {
            return Status.dir(qualified);
        }
        throw new FileNotFoundException("No such file or directory: " + qualified);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) {
        return new BlockLocation[] {new LocalBlockLocation(file.getLen())};
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        return open(path);
    }

    @Override
    public FSDataInputStream open(Path path) throws IOException {
        String key = keyOf(path);
        if (key.isEmpty()) {
            throw new FileNotFoundException("Cannot open the bucket root: " + path);
        }
        try {
            byte[] bytes = s3.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
            return new ByteArrayInputStream(bytes);
        } catch (NoSuchKeyException e) {
            throw notFound(path, e);
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                throw notFound(path, e);
            }
            throw io("GetObject", key, e);
        } catch (SdkException e) {
            throw io("GetObject", key, e);
        }
    }

    /**
     * Direct children: objects as files, common prefixes as directories. A path that is a file
     * lists as itself; a path with no objects below it lists as an empty array (S3 cannot tell a
     * missing directory from an empty one).
     */
    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        String key = keyOf(path);
        String prefix = key.isEmpty() ? "" : key + "/";
        List<FileStatus> result = new ArrayList<>();
        list(prefix, "/", page -> {
            for (S3Object o : page.contents()) {
                if (!o.key().equals(prefix)) { // skip a directory marker for the listed dir itself
                    result.add(Status.file(qualify(o.key()), o.size(), millis(o.lastModified())));
                }
            }
            for (CommonPrefix p : page.commonPrefixes()) {
                String dir = p.prefix().endsWith("/") ? p.prefix().substring(0, p.prefix().length() - 1) : p.prefix();
                result.add(Status.dir(qualify(dir)));
            }
        });
        if (result.isEmpty() && !key.isEmpty()) {
            HeadObjectResponse head = head(key);
            if (head != null) {
                return new FileStatus[] {Status.file(qualify(key), head.contentLength(), millis(head.lastModified()))};
            }
        }
        return result.toArray(new FileStatus[0]);
    }

    // -------------------------------------------------------------------------------- writing

    @Override
    public boolean mkdirs(Path path) {
        return true; // directories are implicit prefixes
    }

    @Override
    public FSDataOutputStream create(Path path, WriteMode overwrite) throws IOException {
        String key = keyOf(path);
        if (key.isEmpty()) {
            throw new IOException("Cannot create the bucket root as a file: " + path);
        }
        if (overwrite == WriteMode.NO_OVERWRITE && head(key) != null) {
            throw new FileAlreadyExistsException("File already exists: " + qualify(key));
        }
        return new PutOnCloseOutputStream(key);
    }

    /**
     * Deletes a file, or a directory (all objects under {@code key/}, in DeleteObjects batches).
     * Returns {@code false} if nothing existed. A non-empty directory needs {@code recursive}.
     */
    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        String key = keyOf(path);
        if (key.isEmpty()) {
            throw new IOException("Refusing to delete the bucket root " + path);
        }
        if (head(key) != null) {
            try {
                s3.deleteObject(b -> b.bucket(bucket).key(key));
            } catch (SdkException e) {
                throw io("DeleteObject", key, e);
            }
            return true;
        }
        String prefix = key + "/";
        List<String> keys = allKeys(prefix);
        if (keys.isEmpty()) {
            return false;
        }
        if (!recursive && !(keys.size() == 1 && keys.get(0).equals(prefix))) {
            throw new IOException("Directory is not empty and recursive is false: " + qualify(key));
        }
        deleteKeys(keys);
        return true;
    }

    /** Copy + delete; a directory is renamed object by object. Not atomic. */
    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        String from = keyOf(src);
        String to = keyOf(dst);
        if (from.isEmpty() || to.isEmpty() || from.equals(to)) {
            return false;
        }
        if (head(from) != null) {
            copy(from, to);
            deleteKeys(List.of(from));
            return true;
        }
        String fromPrefix = from + "/";
        List<String> keys = allKeys(fromPrefix);
        if (keys.isEmpty()) {
            return false;
        }
        for (String k : keys) {
            copy(k, to + "/" + k.substring(fromPrefix.length()));
        }
        deleteKeys(keys);
        return true;
    }

    // -------------------------------------------------------------------------------- helpers

    /** Object key of {@code path} in this bucket ("" = bucket root). */
    String keyOf(Path path) {
        URI u = path.toUri();
        if (u.getScheme() != null && !LabS3FileSystemFactory.SCHEME.equalsIgnoreCase(u.getScheme())) {
            throw new IllegalArgumentException("Not an s3:// path: " + path);
        }
        if (u.getAuthority() != null && !u.getAuthority().equals(bucket)) {
            throw new IllegalArgumentException("Path " + path + " is not in bucket " + bucket);
        }
        String p = u.getPath() == null ? "" : u.getPath();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }

    private Path qualify(String key) {
        return key.isEmpty() ? root : new Path(uri.getScheme(), bucket, "/" + key);
    }

    /** HeadObject, {@code null} if there is no object with exactly this key. */
    private HeadObjectResponse head(String key) throws IOException {
        try {
            return s3.headObject(b -> b.bucket(bucket).key(key));
        } catch (NoSuchKeyException e) {
            return null;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return null;
            }
            throw io("HeadObject", key, e);
        } catch (SdkException e) {
            throw io("HeadObject", key, e);
        }
    }

    private boolean hasChildren(String prefix) throws IOException {
        try {
            ListObjectsV2Response r = s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix).maxKeys(1));
            return !r.contents().isEmpty() || !r.commonPrefixes().isEmpty();
        } catch (SdkException e) {
            throw io("ListObjectsV2", prefix, e);
        }
    }

    /** ListObjectsV2 over all pages ({@code delimiter} may be null). */
    private void list(String prefix, String delimiter, Consumer<ListObjectsV2Response> pageConsumer)
            throws IOException {
        String token = null;
        try {
            do {
                ListObjectsV2Request.Builder req = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix);
                if (delimiter != null) {
                    req.delimiter(delimiter);
                }
                if (token != null) {
                    req.continuationToken(token);
                }
                ListObjectsV2Response page = s3.listObjectsV2(req.build());
                pageConsumer.accept(page);
                token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
            } while (token != null);
        } catch (SdkException e) {
            throw io("ListObjectsV2", prefix, e);
        }
    }

    private List<String> allKeys(String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        list(prefix, null, page -> page.contents().forEach(o -> keys.add(o.key())));
        return keys;
    }

    private void deleteKeys(List<String> keys) throws IOException {
        for (int i = 0; i < keys.size(); i += DELETE_BATCH) {
            List<ObjectIdentifier> batch = new ArrayList<>();
            for (String k : keys.subList(i, Math.min(keys.size(), i + DELETE_BATCH))) {
                batch.add(ObjectIdentifier.builder().key(k).build());
            }
            DeleteObjectsResponse r;
            try {
                r = s3.deleteObjects(b -> b.bucket(bucket)
                        .delete(Delete.builder().objects(batch).quiet(true).build()));
            } catch (SdkException e) {
                throw io("DeleteObjects", keys.get(i), e);
            }
            if (r.hasErrors() && !r.errors().isEmpty()) {
                var err = r.errors().get(0);
                throw new IOException("DeleteObjects s3://" + bucket + "/" + err.key() + " failed: "
                        + err.code() + " " + err.message() + " (" + r.errors().size() + " errors)");
            }
        }
    }

    private void copy(String from, String to) throws IOException {
        try {
            s3.copyObject(b -> b.sourceBucket(bucket).sourceKey(from).destinationBucket(bucket).destinationKey(to));
        } catch (SdkException e) {
            throw io("CopyObject", from + " -> " + to, e);
        }
    }

    private IOException io(String op, String key, SdkException e) {
        return new IOException(op + " s3://" + bucket + "/" + key + " failed: " + e.getMessage(), e);
    }

    private static FileNotFoundException notFound(Path path, Exception cause) {
        FileNotFoundException e = new FileNotFoundException("No such file: " + path);
        e.initCause(cause);
        return e;
    }

    private static long millis(java.time.Instant t) {
        return t == null ? 0L : t.toEpochMilli();
    }

    // ---------------------------------------------------------------------------- inner types

    /** Immutable {@link FileStatus}. */
    record Status(Path path, long len, boolean dir, long modificationTime) implements FileStatus {

        static Status file(Path p, Long len, long mtime) {
            return new Status(p, len == null ? 0L : len, false, mtime);
        }

        static Status dir(Path p) {
            return new Status(p, 0L, true, 0L);
        }

        @Override
        public long getLen() {
            return len;
        }

        @Override
        public long getBlockSize() {
            return BLOCK_SIZE;
        }

        @Override
        public short getReplication() {
            return 1;
        }

        @Override
        public long getModificationTime() {
            return modificationTime;
        }

        @Override
        public long getAccessTime() {
            return 0;
        }

        @Override
        public boolean isDir() {
            return dir;
        }

        @Override
        public Path getPath() {
            return path;
        }
    }

    /** Seekable stream over a fully downloaded object. */
    static final class ByteArrayInputStream extends FSDataInputStream {
        private final byte[] data;
        private int pos;
        private boolean closed;

        ByteArrayInputStream(byte[] data) {
            this.data = data;
        }

        @Override
        public void seek(long desired) throws IOException {
            ensureOpen();
            if (desired < 0 || desired > data.length) {
                throw new IOException("seek(" + desired + ") outside [0, " + data.length + "]");
            }
            pos = (int) desired;
        }

        @Override
        public long getPos() {
            return pos;
        }

        @Override
        public int read() throws IOException {
            ensureOpen();
            return pos < data.length ? data[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            ensureOpen();
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (pos >= data.length) {
                return -1;
            }
            int n = Math.min(len, data.length - pos);
            System.arraycopy(data, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            ensureOpen();
            long k = Math.max(0, Math.min(n, data.length - pos));
            pos += (int) k;
            return k;
        }

        @Override
        public int available() throws IOException {
            ensureOpen();
            return data.length - pos;
        }

        @Override
        public void close() {
            closed = true;
        }

        private void ensureOpen() throws IOException {
            if (closed) {
                throw new IOException("stream closed");
            }
        }
    }

    /** Buffers (memory, then a temp file) and uploads with one PutObject on {@link #close()}. */
    final class PutOnCloseOutputStream extends FSDataOutputStream {
        private final String key;
        private ByteArrayOutputStream memory = new ByteArrayOutputStream(4096);
        private java.nio.file.Path spillFile;
        private OutputStream spill;
        private long pos;
        private boolean closed;

        PutOnCloseOutputStream(String key) {
            this.key = key;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (closed) {
                throw new IOException("stream closed: s3://" + bucket + "/" + key);
            }
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (spill == null && pos + len > spillThreshold) {
                spillFile = Files.createTempFile("lab-s3-upload-", ".tmp");
                spill = new java.io.BufferedOutputStream(Files.newOutputStream(spillFile), 64 * 1024);
                memory.writeTo(spill);
                memory = null;
            }
            if (spill != null) {
                spill.write(b, off, len);
            } else {
                memory.write(b, off, len);
            }
            pos += len;
        }

        @Override
        public long getPos() {
            return pos;
        }

        /** No-op: S3 objects only appear on {@link #close()}. */
        @Override
        public void flush() {}

        /** No-op: S3 objects only appear on {@link #close()}. */
        @Override
        public void sync() {}

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                RequestBody body;
                if (spill != null) {
                    spill.close();
                    body = RequestBody.fromFile(spillFile);
                } else {
                    body = RequestBody.fromBytes(memory.toByteArray());
                }
                s3.putObject(b -> b.bucket(bucket).key(key).contentLength(pos), body);
            } catch (SdkException e) {
                throw io("PutObject", key, e);
            } finally {
                memory = null;
                if (spillFile != null) {
                    Files.deleteIfExists(spillFile);
                }
            }
        }
    }
}
