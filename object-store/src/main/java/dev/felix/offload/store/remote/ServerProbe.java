package dev.felix.offload.store.remote;

import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.zip.CRC32;

/**
 * Finds out once what a server does with CRC32 headers, {@code Content-MD5} and
 * {@code If-None-Match}, and whether its ETags are MD5s, by writing a
 * tiny probe object (under the store's prefix, in the reserved {@code .felix-probe/} folder) and
 * deleting it again. Refusals count as "not supported"; throttling, 5xx and I/O failures (after
 * the store's retries) and access denials are real failures and propagate.
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

    private ServerProbe() {}

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
        boolean useCrc = settings.checksumMode() != ChecksumMode.WHEN_REQUIRED;
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
                || e instanceof dev.felix.offload.store.ObjectNotFoundException;
    }
}
