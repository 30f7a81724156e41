package dev.felix.offload.store.remote;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What was learnt about the server behind one endpoint and bucket, kept so that later commands and
 * restarts use it instead of probing again ({@link ServerProbe}, {@link FindingsKeep}).
 *
 * @param key            which endpoint, bucket and settings it holds for
 * @param serverIdentity the {@code Server} header the server answered the probe with, empty when it
 *                       sends none; an answer naming another server contradicts the findings
 * @param learntAt       when the probe ran
 * @param traits         what the probe found
 * @param uploadRate     bytes per second one body (a segment) uploaded at, as last measured here (see
 *                       {@link UploadPlan}); empty until uploads of a MiB or more were measured
 */
public record ServerFindings(Key key, String serverIdentity, Instant learntAt, ServerTraits traits,
        OptionalLong uploadRate) {

    /**
     * What findings are kept under: the server (endpoint, or AWS's for the region when none is set)
     * and bucket, and the two settings that change what the probe sees: the checksum mode (under
     * {@code when-required} no checksum header is tried) and the encryption (probe puts carry it).
     */
    public record Key(String endpoint, String bucket, ChecksumPolicy checksumMode, Encryption.Kind encryption) {
        public Key {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(bucket, "bucket");
            Objects.requireNonNull(checksumMode, "checksumMode");
            Objects.requireNonNull(encryption, "encryption");
        }

        public static Key of(RemoteStoreSettings settings) {
            String endpoint = settings.endpoint().map(e -> e.toString().replaceAll("/+$", ""))
                    .orElse("aws:" + settings.region());
            return new Key(endpoint, settings.bucket(), settings.checksumMode(), settings.encryption().kind());
        }

        @Override
        public String toString() {
            return "bucket " + bucket + " at " + endpoint + " (checksum " + checksumMode.settingValue() + ", sse "
                    + encryption.name().toLowerCase(java.util.Locale.ROOT) + ")";
        }
    }

    public ServerFindings {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(serverIdentity, "serverIdentity");
        Objects.requireNonNull(learntAt, "learntAt");
        Objects.requireNonNull(traits, "traits");
        Objects.requireNonNull(uploadRate, "uploadRate");
    }

    /** Whether they are older than {@code maxAge} at {@code now} (or dated in the future: a clock set back). */
    public boolean agedAt(Instant now, Duration maxAge) {
        return learntAt.isAfter(now.plusSeconds(60)) || Duration.between(learntAt, now).compareTo(maxAge) >= 0;
    }

    public ServerFindings withUploadRate(long bytesPerSecond) {
        return new ServerFindings(key, serverIdentity, learntAt, traits, OptionalLong.of(bytesPerSecond));
    }

    /** The server as findings and messages name it. */
    public static String describeIdentity(String identity) {
        return identity.isEmpty() ? "a server sending no Server header" : "'" + identity + "'";
    }
}
