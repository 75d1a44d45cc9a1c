package io.karmadafailover.lab.flink.s3;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * <b>The lab's stand-in for Flink's S3 file-system plugins</b> ({@code flink-s3-fs-presto} /
 * {@code flink-s3-fs-hadoop}), which cannot be fetched from the Maven repository reachable in this
 * lab for Flink 1.20. Registers {@link LabS3FileSystem} for the {@code s3://} scheme, built on the
 * AWS SDK v2 synchronous client (JDK {@code HttpURLConnection} transport), so that
 * {@code state.checkpoints.dir: s3://bucket/...} works against an S3-compatible store such as
 * SeaweedFS or MinIO.
 *
 * <p>Discovered by Flink through {@code META-INF/services/org.apache.flink.core.fs.FileSystemFactory}
 * (classpath ServiceLoader, or as a plugin jar under {@code plugins/<name>/}). Configuration keys,
 * read in {@link #configure} from the configuration given to {@code FileSystem.initialize}:
 *
 * <ul>
 *   <li>{@code s3.endpoint} - e.g. {@code http://127.0.0.1:8333}; unset = AWS's regional endpoint;
 *   <li>{@code s3.path.style.access} (also {@code s3.path-style-access}) - default {@code true};
 *   <li>{@code s3.access-key} / {@code s3.secret-key} (also {@code s3.access.key} /
 *       {@code s3.secret.key}) - static credentials; if unset the SDK's default provider chain;
 *   <li>{@code s3.region} - default {@code us-east-1} (only used for signing with most S3 clones).
 * </ul>
 *
 * <p>Limits: see {@link LabS3FileSystem}. Not a general-purpose S3 file system.
 */
public final class LabS3FileSystemFactory implements FileSystemFactory {

    private static final Logger LOG = LoggerFactory.getLogger(LabS3FileSystemFactory.class);

    public static final String SCHEME = "s3";

    public static final ConfigOption<String> ENDPOINT =
            ConfigOptions.key("s3.endpoint").stringType().noDefaultValue()
                    .withDescription("S3 endpoint URL, e.g. http://127.0.0.1:8333");
    public static final ConfigOption<Boolean> PATH_STYLE_ACCESS =
            ConfigOptions.key("s3.path.style.access").booleanType().defaultValue(true)
                    .withFallbackKeys("s3.path-style-access")
                    .withDescription("Path-style URLs (http://host/bucket/key) instead of virtual hosts");
    public static final ConfigOption<String> ACCESS_KEY =
            ConfigOptions.key("s3.access-key").stringType().noDefaultValue()
                    .withFallbackKeys("s3.access.key");
    public static final ConfigOption<String> SECRET_KEY =
            ConfigOptions.key("s3.secret-key").stringType().noDefaultValue()
                    .withFallbackKeys("s3.secret.key");
    public static final ConfigOption<String> REGION =
            ConfigOptions.key("s3.region").stringType().defaultValue("us-east-1");

    /**
     * One client per distinct setting, shared by all buckets and by the factory instances Flink
     * creates on every {@code FileSystem.initialize} (ServiceLoader makes new instances each time).
     * Clients are never closed: they live as long as the JVM, like Flink's file-system cache.
     */
    private static final Map<Settings, S3Client> CLIENTS = new ConcurrentHashMap<>();

    private volatile Settings settings = Settings.from(new Configuration());

    /** Effective client settings; {@code secretKey} is excluded from {@link #toString()}. */
    record Settings(String endpoint, boolean pathStyle, String accessKey, String secretKey, String region) {

        static Settings from(Configuration conf) {
            String endpoint = blankToNull(conf.get(ENDPOINT));
            return new Settings(
                    endpoint,
                    conf.get(PATH_STYLE_ACCESS),
                    blankToNull(conf.get(ACCESS_KEY)),
                    blankToNull(conf.get(SECRET_KEY)),
                    conf.get(REGION));
        }

        @Override
        public String toString() {
            return "endpoint=" + (endpoint == null ? "<aws default>" : endpoint)
                    + " pathStyle=" + pathStyle
                    + " region=" + region
                    + " credentials=" + (accessKey != null ? "static(" + accessKey + ")" : "sdk-default-chain");
        }
    }

    @Override
    public String getScheme() {
        return SCHEME;
    }

    @Override
    public void configure(Configuration config) {
        Settings s = Settings.from(config == null ? new Configuration() : config);
        this.settings = s;
        LOG.info("LAB_S3_FS configured scheme={} {}", SCHEME, s);
    }

    @Override
    public FileSystem create(URI fsUri) throws IOException {
        String bucket = fsUri.getAuthority();
        if (bucket == null || bucket.isEmpty()) {
            throw new IOException("s3 URI without bucket: " + fsUri + " (expected s3://<bucket>/<path>)");
        }
        Settings s = settings;
        return new LabS3FileSystem(bucket, CLIENTS.computeIfAbsent(s, LabS3FileSystemFactory::buildClient));
    }

    static S3Client buildClient(Settings s) {
        AwsCredentialsProvider credentials;
        if (s.accessKey() != null && s.secretKey() != null) {
            credentials = StaticCredentialsProvider.create(AwsBasicCredentials.create(s.accessKey(), s.secretKey()));
        } else {
            credentials = DefaultCredentialsProvider.builder().build();
        }
        var builder = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(10))
                        .socketTimeout(Duration.ofSeconds(60)))
                .region(Region.of(s.region()))
                .credentialsProvider(credentials)
                .forcePathStyle(s.pathStyle())
                // SDK >= 2.30 would otherwise add CRC32 checksums (and aws-chunked bodies) to every
                // upload; S3 clones such as SeaweedFS, and the tests' fake server, want plain bodies.
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build());
        if (s.endpoint() != null) {
            builder.endpointOverride(URI.create(s.endpoint()));
        }
        LOG.info("LAB_S3_FS client {}", s);
        return builder.build();
    }

    private static String blankToNull(String v) {
        return v == null || v.isBlank() ? null : v.strip();
    }
}
