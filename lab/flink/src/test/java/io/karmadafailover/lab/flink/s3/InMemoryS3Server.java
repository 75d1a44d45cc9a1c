package io.karmadafailover.lab.flink.s3;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import javax.xml.parsers.DocumentBuilderFactory;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * A tiny in-memory S3 for tests, on the JDK's {@code com.sun.net.httpserver} at 127.0.0.1:0 with
 * path-style URLs ({@code http://127.0.0.1:port/bucket/key}). Implements just what
 * {@link LabS3FileSystem} calls: PutObject (incl. CopyObject via {@code x-amz-copy-source}),
 * GetObject, HeadObject, DeleteObject, ListObjectsV2 (prefix, delimiter, max-keys, continuation),
 * DeleteObjects, and HeadBucket/CreateBucket. No authentication, no versions, no multipart.
 *
 * <p>{@code maxKeysCap} caps every list page (real S3: 1000), so tests exercise paging.
 */
public final class InMemoryS3Server implements AutoCloseable {

    private static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    record Obj(byte[] data, Instant lastModified, String etag) {}

    private final HttpServer server;
    private final ExecutorService executor;
    private final Map<String, NavigableMap<String, Obj>> buckets = new ConcurrentHashMap<>();
    private final int maxKeysCap;
    /** "METHOD operation" per request, for assertions. */
    public final ConcurrentLinkedQueue<String> requests = new ConcurrentLinkedQueue<>();
    /** Uploads that arrived aws-chunked encoded (the client is configured not to do that). */
    public final AtomicInteger chunkedUploads = new AtomicInteger();

    public InMemoryS3Server(int maxKeysCap, String... bucketNames) throws IOException {
        this.maxKeysCap = maxKeysCap;
        for (String b : bucketNames) {
            buckets.put(b, new ConcurrentSkipListMap<>());
        }
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "in-memory-s3");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Snapshot of the keys in {@code bucket}. */
    public List<String> keys(String bucket) {
        return new ArrayList<>(buckets.get(bucket).keySet());
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    // ---------------------------------------------------------------------------------------

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String method = ex.getRequestMethod();
            URI uri = ex.getRequestURI();
            String path = uri.getPath(); // decoded
            Map<String, String> query = parseQuery(uri.getRawQuery());
            String rest = path.startsWith("/") ? path.substring(1) : path;
            int slash = rest.indexOf('/');
            String bucketName = slash < 0 ? rest : rest.substring(0, slash);
            String key = slash < 0 ? "" : rest.substring(slash + 1);
            byte[] body = readBody(ex);

            if (key.isEmpty() && method.equals("PUT")) {
                requests.add("PUT CreateBucket");
                buckets.putIfAbsent(bucketName, new ConcurrentSkipListMap<>());
                send(ex, 200, "application/xml", new byte[0]);
                return;
            }
            NavigableMap<String, Obj> bucket = buckets.get(bucketName);
            if (bucket == null) {
                requests.add(method + " NoSuchBucket");
                error(ex, method, 404, "NoSuchBucket", bucketName);
                return;
            }
            if (key.isEmpty()) {
                if (method.equals("GET") && "2".equals(query.get("list-type"))) {
                    requests.add("GET ListObjectsV2");
                    list(ex, bucketName, bucket, query);
                } else if (method.equals("POST") && query.containsKey("delete")) {
                    requests.add("POST DeleteObjects");
                    deleteObjects(ex, bucket, body);
                } else if (method.equals("HEAD")) {
                    requests.add("HEAD HeadBucket");
                    send(ex, 200, null, null);
                } else {
                    requests.add(method + " unsupported-bucket-op " + query.keySet());
                    error(ex, method, 501, "NotImplemented", "bucket " + method + " " + query.keySet());
                }
                return;
            }
            switch (method) {
                case "PUT" -> {
                    String copySource = ex.getRequestHeaders().getFirst("x-amz-copy-source");
                    if (copySource != null) {
                        requests.add("PUT CopyObject");
                        copy(ex, bucket, key, copySource);
                    } else {
                        requests.add("PUT PutObject");
                        byte[] data = maybeDechunk(ex, body);
                        Obj o = new Obj(data, Instant.now().truncatedTo(ChronoUnit.SECONDS), md5(data));
                        bucket.put(key, o);
                        ex.getResponseHeaders().add("ETag", o.etag());
                        send(ex, 200, null, new byte[0]);
                    }
                }
                case "GET", "HEAD" -> {
                    requests.add(method + (method.equals("GET") ? " GetObject" : " HeadObject"));
                    Obj o = bucket.get(key);
                    if (o == null) {
                        error(ex, method, 404, "NoSuchKey", key);
                        return;
                    }
                    ex.getResponseHeaders().add("ETag", o.etag());
                    ex.getResponseHeaders().add("Last-Modified", HTTP_DATE.format(o.lastModified()));
                    if (method.equals("HEAD")) {
                        ex.getResponseHeaders().add("Content-Length", String.valueOf(o.data().length));
                        send(ex, 200, "application/octet-stream", null);
                    } else {
                        send(ex, 200, "application/octet-stream", o.data());
                    }
                }
                case "DELETE" -> {
                    requests.add("DELETE DeleteObject");
                    bucket.remove(key);
                    send(ex, 204, null, null);
                }
                default -> {
                    requests.add(method + " unsupported-object-op");
                    error(ex, method, 501, "NotImplemented", method);
                }
            }
        } catch (Exception e) {
            e.printStackTrace();
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    private void list(HttpExchange ex, String bucketName, NavigableMap<String, Obj> bucket, Map<String, String> q)
            throws IOException {
        String prefix = q.getOrDefault("prefix", "");
        String delimiter = q.get("delimiter");
        int maxKeys = Math.min(maxKeysCap, Integer.parseInt(q.getOrDefault("max-keys", "1000")));
        boolean urlEncode = "url".equals(q.get("encoding-type"));
        String after = q.containsKey("continuation-token") ? q.get("continuation-token") : q.get("start-after");

        // Ordered entries: name -> object (null for a common prefix). A common prefix sorts where
        // its first key would, so "name > token" resumes correctly across pages.
        LinkedHashMap<String, Obj> entries = new LinkedHashMap<>();
        for (Map.Entry<String, Obj> e : bucket.tailMap(prefix, true).entrySet()) {
            String k = e.getKey();
            if (!k.startsWith(prefix)) {
                break;
            }
            int d = delimiter == null || delimiter.isEmpty() ? -1 : k.indexOf(delimiter, prefix.length());
            if (d >= 0) {
                entries.putIfAbsent(k.substring(0, d + delimiter.length()), null);
            } else {
                entries.put(k, e.getValue());
            }
        }
        StringBuilder contents = new StringBuilder();
        StringBuilder prefixes = new StringBuilder();
        int count = 0;
        String last = null;
        boolean truncated = false;
        for (Map.Entry<String, Obj> e : entries.entrySet()) {
            if (after != null && e.getKey().compareTo(after) <= 0) {
                continue;
            }
            if (count == maxKeys) {
                truncated = true;
                break;
            }
            String name = urlEncode ? urlEncode(e.getKey()) : xml(e.getKey());
            if (e.getValue() == null) {
                prefixes.append("<CommonPrefixes><Prefix>").append(name).append("</Prefix></CommonPrefixes>");
            } else {
                Obj o = e.getValue();
                contents.append("<Contents><Key>").append(name).append("</Key><LastModified>")
                        .append(o.lastModified().truncatedTo(ChronoUnit.MILLIS)).append("</LastModified><ETag>")
                        .append(xml(o.etag())).append("</ETag><Size>").append(o.data().length)
                        .append("</Size><StorageClass>STANDARD</StorageClass></Contents>");
            }
            count++;
            last = e.getKey();
        }
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
                .append("<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">")
                .append("<Name>").append(xml(bucketName)).append("</Name>")
                .append("<Prefix>").append(urlEncode ? urlEncode(prefix) : xml(prefix)).append("</Prefix>")
                .append("<KeyCount>").append(count).append("</KeyCount>")
                .append("<MaxKeys>").append(maxKeys).append("</MaxKeys>");
        if (delimiter != null) {
            xml.append("<Delimiter>").append(xml(delimiter)).append("</Delimiter>");
        }
        if (urlEncode) {
            xml.append("<EncodingType>url</EncodingType>");
        }
        xml.append("<IsTruncated>").append(truncated).append("</IsTruncated>");
        if (q.containsKey("continuation-token")) {
            xml.append("<ContinuationToken>").append(xml(q.get("continuation-token"))).append("</ContinuationToken>");
        }
        if (truncated) {
            xml.append("<NextContinuationToken>").append(xml(last)).append("</NextContinuationToken>");
        }
        xml.append(contents).append(prefixes).append("</ListBucketResult>");
        send(ex, 200, "application/xml", xml.toString().getBytes(StandardCharsets.UTF_8));
    }

    private void deleteObjects(HttpExchange ex, NavigableMap<String, Obj> bucket, byte[] body) throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new ByteArrayInputStream(body));
        NodeList objects = doc.getDocumentElement().getElementsByTagName("Object");
        NodeList quietNodes = doc.getDocumentElement().getElementsByTagName("Quiet");
        boolean quiet = quietNodes.getLength() > 0 && "true".equals(quietNodes.item(0).getTextContent().strip());
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
                .append("<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        for (int i = 0; i < objects.getLength(); i++) {
            Element o = (Element) objects.item(i);
            String key = o.getElementsByTagName("Key").item(0).getTextContent();
            bucket.remove(key);
            if (!quiet) {
                xml.append("<Deleted><Key>").append(xml(key)).append("</Key></Deleted>");
            }
        }
        xml.append("</DeleteResult>");
        send(ex, 200, "application/xml", xml.toString().getBytes(StandardCharsets.UTF_8));
    }

    private void copy(HttpExchange ex, NavigableMap<String, Obj> bucket, String key, String copySource)
            throws IOException {
        String src = URLDecoder.decode(copySource.replace("+", "%2B"), StandardCharsets.UTF_8);
        int q = src.indexOf('?');
        if (q >= 0) {
            src = src.substring(0, q);
        }
        if (src.startsWith("/")) {
            src = src.substring(1);
        }
        int slash = src.indexOf('/');
        NavigableMap<String, Obj> srcBucket = slash < 0 ? null : buckets.get(src.substring(0, slash));
        Obj o = srcBucket == null ? null : srcBucket.get(src.substring(slash + 1));
        if (o == null) {
            error(ex, "PUT", 404, "NoSuchKey", src);
            return;
        }
        Obj copy = new Obj(o.data().clone(), Instant.now().truncatedTo(ChronoUnit.SECONDS), o.etag());
        bucket.put(key, copy);
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CopyObjectResult><LastModified>"
                + copy.lastModified() + "</LastModified><ETag>" + xml(copy.etag()) + "</ETag></CopyObjectResult>";
        send(ex, 200, "application/xml", xml.getBytes(StandardCharsets.UTF_8));
    }

    /** Decodes an aws-chunked body (STREAMING-* payloads) into the plain object bytes. */
    private byte[] maybeDechunk(HttpExchange ex, byte[] body) throws IOException {
        String sha = ex.getRequestHeaders().getFirst("x-amz-content-sha256");
        String enc = ex.getRequestHeaders().getFirst("Content-Encoding");
        boolean chunked = (sha != null && sha.startsWith("STREAMING-")) || (enc != null && enc.contains("aws-chunked"));
        if (!chunked) {
            return body;
        }
        chunkedUploads.incrementAndGet();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = new ByteArrayInputStream(body);
        while (true) {
            String header = readLine(in);
            int semi = header.indexOf(';');
            int size = Integer.parseInt((semi < 0 ? header : header.substring(0, semi)).strip(), 16);
            if (size == 0) {
                return out.toByteArray();
            }
            out.write(in.readNBytes(size));
            readLine(in); // CRLF after the chunk data
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }

    private static byte[] readBody(HttpExchange ex) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            return in.readAllBytes();
        }
    }

    private static void error(HttpExchange ex, String method, int status, String code, String resource)
            throws IOException {
        if (method.equals("HEAD")) {
            send(ex, status, null, null);
            return;
        }
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>"
                + code + "</Message><Resource>" + xml(resource) + "</Resource></Error>";
        send(ex, status, "application/xml", xml.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code body == null}: no body (HEAD, 204). */
    private static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        if (contentType != null) {
            ex.getResponseHeaders().add("Content-Type", contentType);
        }
        if (body == null) {
            ex.sendResponseHeaders(status, -1);
            return;
        }
        // 0 would mean "chunked" to HttpServer; -1 means "no body".
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static Map<String, String> parseQuery(String raw) {
        Map<String, String> q = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return q;
        }
        for (String part : raw.split("&")) {
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            q.put(k, v);
        }
        return q;
    }

    private static String urlEncode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20").replace("%2F", "/");
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String md5(byte[] data) {
        try {
            return "\"" + HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data)) + "\"";
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
