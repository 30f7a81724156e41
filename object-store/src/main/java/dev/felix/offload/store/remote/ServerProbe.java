package dev.felix.offload.store.remote;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.zip.CRC32;

/**
 * The server behind a remote store: what it does with CRC32 headers, {@code Content-MD5} and
 * {@code If-None-Match}, and whether its ETags are MD5s ({@link ServerTraits}), found out once, and
 * what that means for each request.
 *
 * <p>The probe writes a tiny object (under the store's prefix, in the reserved {@code .felix-probe/}
 * folder) and deletes it again. Refusals count as "not supported"; throttling, 5xx and I/O failures
 * (after the store's retries) and access denials are real failures and propagate. It runs on first
 * need, not when the store opens, so a store that is never used sends nothing, and once however many
 * threads need it at the same time.
 *
 * <p>Both remote stores talk to the same kinds of servers through different client libraries; what a
 * server does does not depend on the library. So the probe, its result and the decisions drawn from
 * it (send a CRC32? ask for the stored one? believe a multipart composite? allow a create-only put?)
 * live here once, and each store only turns them into headers of its own client.
 */
public final class ServerProbe {
    /** The raw operations the probe needs, on full keys (the probe key is reserved, so it skips key checks). */
    public interface Target {
        /** Returns the ETag answered, unquoted; {@code contentMd5} (base64) travels as {@code Content-MD5}. */
        String put(String fullKey, byte[] body, OptionalLong crc32, Optional<String> contentMd5, boolean createOnly)
                throws StoreException;

        OptionalLong storedCrc32(String fullKey) throws StoreException;

        void delete(String fullKey) throws StoreException;

        /** Up to 1000 full keys under {@code fullPrefix}, reserved ones included. */
        java.util.List<String> listFullKeys(String fullPrefix) throws StoreException;
    }

    /** Probe objects older than this are leftovers of a process killed mid-probe, and are deleted. */
    static final java.time.Duration LEFTOVER_AGE = java.time.Duration.ofHours(1);

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ServerProbe.class);


    /**
     * How long a refused probe stands before another is tried. Reads consult the traits on every
     * request; without a pause, each one would first send a probe put bound to be refused again.
     */
    static final Duration REFUSED_PROBE_PAUSE = Duration.ofMinutes(5);

    /** What reads assume of a server they could not probe: that it keeps and checks nothing. */
    private static final ServerTraits UNKNOWN = new ServerTraits(false, false, false, false, false, false);

    private final RemoteStoreSettings settings;
    private final Target target;
    private volatile ServerTraits traits;
    private volatile long probeRefusedAt;
    private volatile boolean probeRefused;

    /** @param target the store's raw operations, used by the probe on first need */
    public ServerProbe(RemoteStoreSettings settings, Target target) {
        this.settings = settings;
        this.target = target;
    }

    /** What the server was found to do (probing it on first use). */
    public ServerTraits traits() throws StoreException {
        ServerTraits t = traits;
        if (t == null) {
            synchronized (this) {
                t = traits;
                if (t == null) {
                    t = run(target, settings);
                    if (t.md5Etags() && !etagsAreMd5s()) {
                        LOG.info("{}: with SSE-KMS configured the server's ETags are not MD5s of the bytes, so no upload"
                                + " is proven by its Content-MD5 and ETag; copies are proven by a stored CRC32 or read"
                                + " back", settings.describe());
                    }
                    traits = t;
                }
            }
        }
        return t;
    }

    /**
     * The traits for deciding how to read. The probe writes, and credentials that may only read (a
     * scrub's, say) are refused it; reads then go on as if the server kept no checksums, so callers
     * check objects by reading them in full. Nothing that writes uses this: a put still meets the
     * refusal itself. The refusal is not remembered for good, so credentials that gain the right, or
     * a denial that was passing, are probed again after {@link #REFUSED_PROBE_PAUSE}.
     */
    private ServerTraits traitsForReading() throws StoreException {
        ServerTraits t = traits;
        if (t != null) {
            return t;
        }
        if (probeRefused && System.nanoTime() - probeRefusedAt < REFUSED_PROBE_PAUSE.toNanos()) {
            return UNKNOWN;
        }
        try {
            return traits();
        } catch (AccessDeniedException e) {
            probeRefusedAt = System.nanoTime();
            probeRefused = true;
            LOG.warn("{}: the capability probe was refused ({}); reading as if the server kept no checksums, "
                    + "so objects are checked by reading them in full", settings.describe(), e.getMessage());
            return UNKNOWN;
        }
    }

    /**
     * What the store can do. Where the probe is refused this answers what reads may assume (nothing
     * beyond user metadata) rather than failing; uploads meet the refusal themselves.
     */
    public Set<StoreCapability> capabilities() throws StoreException {
        Set<StoreCapability> caps = traitsForReading().capabilities();
        if (!etagsAreMd5s()) {
            caps.remove(StoreCapability.MD5_ETAG);
        }
        return caps;
    }

    /**
     * Whether the encryption configured leaves ETags MD5s of the bytes: SSE-S3 does, SSE-KMS (and
     * customer keys, which the settings do not offer) makes them something else.
     */
    private boolean etagsAreMd5s() {
        return settings.encryption().kind() != Encryption.Kind.KMS;
    }

    /**
     * Whether upload requests carry {@code Content-MD5}: where the probe saw the server refuse a wrong
     * one, unless the CRC32 the requests carry is checked already ({@link #provesByCrc32()}): an MD5
     * would then cost a digest of every byte and prove nothing more.
     */
    public boolean sendsContentMd5() throws StoreException {
        return traits().contentMd5Verified() && !provesByCrc32();
    }

    /**
     * Whether an upload's answer proves its copy by the CRC32s it carried: uploads carry them, and
     * the probe saw the server refuse a wrong one (a server checking part CRC32s as S3 and S3Mock do;
     * {@link #trustsComposites()} relies on the same).
     */
    public boolean provesByCrc32() throws StoreException {
        return sendsCrc32() && traits().crc32Verified();
    }

    /**
     * Whether an upload's answer can prove its copy: the server checks the Content-MD5 it is sent
     * and answers the MD5 of what it stored as the ETag.
     */
    public boolean provesByContentMd5() throws StoreException {
        ServerTraits t = traits();
        return t.contentMd5Verified() && t.md5Etags() && etagsAreMd5s();
    }

    /** Whether uploads carry an {@code x-amz-checksum-crc32} header. */
    public boolean sendsCrc32() throws StoreException {
        return byMode(() -> traits().crc32Accepted());
    }

    /** Whether reads and heads ask for the stored CRC32 ({@code x-amz-checksum-mode: ENABLED}). */
    public boolean asksStoredCrc32() throws StoreException {
        return byMode(() -> traitsForReading().crc32Stored());
    }

    @FunctionalInterface
    private interface ProbedAnswer {
        boolean get() throws StoreException;
    }

    /** The checksum mode decides, except in auto mode, where what the probe found does. */
    private boolean byMode(ProbedAnswer probed) throws StoreException {
        return switch (settings.checksumMode()) {
            case ALWAYS -> true;
            case WHEN_REQUIRED -> false;
            default -> probed.get();
        };
    }

    /**
     * A composite checksum is the server's word only if the server checks the CRC32s it is sent (the
     * probe saw it refuse a wrong one); otherwise it may just be a CRC of the headers the store sent.
     */
    private boolean trustsComposites() throws StoreException {
        return settings.checksumMode() != ChecksumPolicy.WHEN_REQUIRED && traitsForReading().crc32Verified();
    }

    /** Whether a key holds an object, for a head before a put. */
    @FunctionalInterface
    public interface KeyCheck {
        boolean exists(String key) throws StoreException;
    }

    /**
     * Guards a create-only put where the server would silently turn it into an overwrite: one that
     * ignores {@code If-None-Match} gives no way to tell whether the key was free. Such a put is
     * refused, unless it asks for {@link PutOptions#headFirst()}: then the key is headed first and an
     * existing object fails the put just as a 412 would. Where the server honours the header, the
     * header does the work, but for a {@code headFirst} put that goes up in parts: that is headed
     * first too, since a head costs little beside the parts, and S3Mock answered a conditional
     * completion over an existing key with 304 and had lost the existing object afterwards.
     *
     * @param multipart whether the body goes up as a multipart upload
     */
    public void checkCreateOnly(String key, PutOptions options, boolean multipart, KeyCheck check)
            throws StoreException {
        if (!options.createOnly()) {
            return;
        }
        boolean honoured = traits().createOnlyHonoured();
        if (honoured && !(multipart && options.headFirst())) {
            return;
        }
        String where = settings.endpoint().map(Object::toString).orElse("AWS");
        if (!options.headFirst()) {
            throw new CapabilityMissingException("create-only put of key '" + key + "' refused: the server at "
                    + where + " ignores If-None-Match", key, null, null);
        }
        if (check.exists(key)) {
            throw new PreconditionFailedException("put of key '" + key + "' refused: it exists (checked by a head "
                    + "before the " + (honoured ? "multipart upload" : "put, as the server at " + where
                    + " ignores If-None-Match") + ")", key, null, null);
        }
    }

    /**
     * The CRC32 a single-request upload carries: none unless uploads carry one, else the caller's,
     * computed from the body when the caller gave none.
     */
    public OptionalLong crc32ToSend(String key, UploadBody body, PutOptions options) throws StoreException {
        if (!sendsCrc32()) {
            return OptionalLong.empty();
        }
        OptionalLong crc = options.crc32();
        return crc.isPresent() ? crc : OptionalLong.of(PartedUpload.crc32(key, body, 0, body.length()));
    }

    /**
     * What head answers, from the server's answer however the client library presents it: a
     * multipart object's composite checksum becomes its whole CRC32 only as {@link PartCrc32s}
     * allows, and the part record is hidden from the caller's metadata.
     *
     * @param etag the ETag, already unquoted
     * @param metadata the user metadata, names as the server answered them
     * @param checksum the {@code x-amz-checksum-crc32} answered, null if none
     */
    public ObjectHead head(String key, long size, String etag, Map<String, String> metadata, String checksum)
            throws StoreException {
        // the probe's verdict is needed (and the probe possibly run) only when there is a composite to judge
        boolean trusted = Crc32Text.compositeFromBase64(checksum).isPresent() && trustsComposites();
        OptionalLong crc = PartCrc32s.storedCrc32(checksum, metadata, size, trusted);
        return new ObjectHead(key, size, etag, PartCrc32s.withoutRecord(metadata), crc);
    }

    public static ServerTraits run(Target target, RemoteStoreSettings settings) throws StoreException {
        // The start time leads the name so that a later probe can tell a leftover from a probe running now.
        String folder = settings.fullKey(KeyRules.RESERVED_PREFIX + "probe/");
        String base = folder + System.currentTimeMillis() + "-" + UUID.randomUUID();
        String first = base + "-a";
        String second = base + "-b";
        byte[] body = "felix-offload capability probe".getBytes(StandardCharsets.US_ASCII);
        CRC32 crc = new CRC32();
        crc.update(body);
        long good = crc.getValue();
        boolean useCrc = settings.checksumMode() != ChecksumPolicy.WHEN_REQUIRED;
        boolean accepted = false;
        boolean verified = false;
        boolean stored = false;
        boolean createOnly;
        boolean md5Verified = false;
        boolean md5Etags = false;
        try {
            if (useCrc) {
                try {
                    target.put(first, body, OptionalLong.of(good), Optional.empty(), false);
                    accepted = true;
                } catch (StoreException e) {
                    if (isFailure(e)) {
                        throw e;
                    }
                }
            }
            if (!accepted) {
                target.put(first, body, OptionalLong.empty(), Optional.empty(), false);
            }
            if (accepted) {
                try {
                    target.put(second, body, OptionalLong.of(good ^ 0x5a5a5a5aL), Optional.empty(), false);
                } catch (IntegrityRejectedException e) {
                    verified = true;
                } catch (StoreException e) {
                    if (isFailure(e)) {
                        throw e;
                    }
                }
                OptionalLong back = target.storedCrc32(first);
                stored = back.isPresent() && back.getAsLong() == good;
            }
            // Content-MD5 on the second key (whatever the CRC32 probe left there is overwritten by the same body);
            // not under when-required, whose servers may break on checksum headers of any kind
            if (useCrc) {
                Md5Found md5 = probeContentMd5(target, second, body);
                md5Verified = md5.verified();
                md5Etags = md5.etags();
            }
            try {
                target.put(first, body, OptionalLong.empty(), Optional.empty(), true);
                createOnly = false;
            } catch (PreconditionFailedException e) {
                createOnly = true;
            } catch (StoreException e) {
                if (isFailure(e)) {
                    throw e;
                }
                createOnly = false;
            }
        } catch (StoreException | RuntimeException e) {
            // The failure that stopped the probe is the one to report: an unreachable server fails the
            // clean-up deletes too, and those must not replace it.
            for (String key : new String[] {first, second}) {
                try {
                    target.delete(key);
                } catch (StoreException | RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                }
            }
            throw e;
        }
        target.delete(first);
        target.delete(second);
        deleteLeftovers(target, folder, System.currentTimeMillis() - LEFTOVER_AGE.toMillis());
        ServerTraits traits = new ServerTraits(accepted, verified, stored, createOnly, md5Verified, md5Etags);
        LOG.info("{}: {}", settings.describe(), traits);
        return traits;
    }

    /**
     * Deletes probe objects a killed process left behind (begun before {@code cutoffMillis}, or named
     * without a start time). Best effort: a failure here only leaves them for the next probe.
     */
    static void deleteLeftovers(Target target, String folder, long cutoffMillis) {
        try {
            for (String key : target.listFullKeys(folder)) {
                String name = key.substring(folder.length());
                int dash = name.indexOf('-');
                long started;
                try {
                    started = dash > 0 ? Long.parseLong(name.substring(0, dash)) : Long.MIN_VALUE;
                } catch (NumberFormatException e) {
                    started = Long.MIN_VALUE;
                }
                if (started < cutoffMillis) {
                    target.delete(key);
                    LOG.info("deleted a capability probe object a killed process left: {}", key);
                }
            }
        } catch (StoreException e) {
            LOG.warn("could not clear old capability probe objects under {}: {}", folder, e.getMessage());
        }
    }

    private record Md5Found(boolean verified, boolean etags) {}

    /** Puts {@code body} with its right Content-MD5 (is the ETag its MD5?), then with a wrong one (refused?). */
    private static Md5Found probeContentMd5(Target target, String key, byte[] body) throws StoreException {
        byte[] md5 = dev.felix.offload.store.BodyDigests.md5().digest(body);
        boolean etags;
        try {
            String etag = target.put(key, body, OptionalLong.empty(), Optional.of(Base64.getEncoder().encodeToString(md5)),
                    false);
            etags = HexFormat.of().formatHex(md5).equalsIgnoreCase(etag);
        } catch (StoreException e) {
            if (isFailure(e)) {
                throw e;
            }
            return new Md5Found(false, false); // refused even the right one: send none
        }
        byte[] wrong = md5.clone();
        wrong[0] ^= 0x5a;
        try {
            target.put(key, body, OptionalLong.empty(), Optional.of(Base64.getEncoder().encodeToString(wrong)), false);
            return new Md5Found(false, etags);
        } catch (IntegrityRejectedException e) {
            return new Md5Found(true, etags);
        } catch (StoreException e) {
            if (isFailure(e)) {
                throw e;
            }
            return new Md5Found(false, etags);
        }
    }

    private static boolean isFailure(StoreException e) {
        return e.isRetryable() || e instanceof dev.felix.offload.store.AccessDeniedException
                || e instanceof dev.felix.offload.store.ObjectNotFoundException
                || e instanceof dev.felix.offload.store.BucketMissingException;
    }
}
