package dev.felix.offload.store.remote;

import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The capability probe's requests: the tiny objects it puts, asks about and deletes to learn a
 * server's {@link ServerTraits}, and the clearing of objects a killed probe left. {@code ServerProbe}
 * decides when to probe and what its findings mean; this class only sends the probe.
 */
public final class CapabilityProbe {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CapabilityProbe.class);

    /** The raw operations the probe needs, on full keys (the probe key is reserved, so it skips key checks). */
    public interface Target {
        /** Returns the ETag answered, unquoted; {@code contentMd5} (base64) travels as {@code Content-MD5}. */
        String put(String fullKey, byte[] body, OptionalLong crc32, Optional<String> contentMd5, boolean createOnly)
                throws StoreException;

        OptionalLong storedCrc32(String fullKey) throws StoreException;

        void delete(String fullKey) throws StoreException;

        /** Up to 1000 full keys under {@code fullPrefix}, reserved ones included. */
        java.util.List<String> listFullKeys(String fullPrefix) throws StoreException;

        /** The bytes at {@code fullKey}, empty when there is no such object (the store's copy of findings). */
        default Optional<byte[]> read(String fullKey) throws StoreException {
            return Optional.empty();
        }
    }

    /** Probe objects older than this are leftovers of a process killed mid-probe, and are deleted. */
    static final java.time.Duration LEFTOVER_AGE = java.time.Duration.ofHours(1);

    private CapabilityProbe() {
    }

    /**
     * Probes the server: five tiny objects, most requests at once, in three rounds (puts; the stored
     * CRC32 and a create-only put over an existing key; deletes), then deleted. The start time leads
     * every name, so a later probe can tell a leftover from a probe running now.
     */
    public static ServerTraits run(Target target, RemoteStoreSettings settings) throws StoreException {
        String folder = settings.fullKey(KeyRules.RESERVED_PREFIX + "probe/");
        String base = folder + System.currentTimeMillis() + "-" + UUID.randomUUID();
        byte[] body = "felix-offload capability probe".getBytes(StandardCharsets.US_ASCII);
        CRC32 crc = new CRC32();
        crc.update(body);
        long good = crc.getValue();
        boolean useCrc = settings.checksumMode() != ChecksumPolicy.WHEN_REQUIRED;
        String withCrc = base + "-a";      // the right CRC32: accepted? stored?
        String wrongCrc = base + "-b";     // a wrong CRC32: refused?
        String withMd5 = base + "-c";      // the right Content-MD5: accepted, and is the ETag the MD5?
        String wrongMd5 = base + "-d";     // a wrong Content-MD5: refused?
        String existing = base + "-e";     // put plainly, then put over create-only: refused?
        List<String> keys = useCrc ? List.of(withCrc, wrongCrc, withMd5, wrongMd5, existing) : List.of(withCrc, existing);
        byte[] md5 = dev.felix.offload.store.BodyDigests.md5().digest(body);
        byte[] badMd5 = md5.clone();
        badMd5[0] ^= 0x5a;
        ExecutorService pool = Executors.newFixedThreadPool(keys.size() + 1, r -> {
            Thread t = new Thread(r, "capability-probe");
            t.setDaemon(true);
            return t;
        });
        try {
            // Round 1: every put at once (checksum headers only where the mode allows them: not under
            // when-required, whose servers may break on checksum headers of any kind), and the leftovers.
            Future<Boolean> crcAccepted = pool.submit(() -> {
                if (useCrc && refusal(() -> target.put(withCrc, body, OptionalLong.of(good), Optional.empty(), false)) == null) {
                    return true;
                }
                target.put(withCrc, body, OptionalLong.empty(), Optional.empty(), false);
                return false;
            });
            Future<Boolean> wrongCrcRefused = pool.submit(() -> useCrc && refusal(() -> target.put(wrongCrc, body,
                    OptionalLong.of(good ^ 0x5a5a5a5aL), Optional.empty(), false)) instanceof IntegrityRejectedException);
            Future<String> md5Etag = pool.submit(() -> {
                String[] etag = {null};
                if (useCrc && refusal(() -> etag[0] = target.put(withMd5, body, OptionalLong.empty(),
                        Optional.of(Base64.getEncoder().encodeToString(md5)), false)) == null) {
                    return etag[0];
                }
                return null; // not tried, or refused even the right one: send none
            });
            Future<Boolean> wrongMd5Refused = pool.submit(() -> useCrc && refusal(() -> target.put(wrongMd5, body,
                    OptionalLong.empty(), Optional.of(Base64.getEncoder().encodeToString(badMd5)), false))
                    instanceof IntegrityRejectedException);
            Future<?> plain = pool.submit(() -> target.put(existing, body, OptionalLong.empty(), Optional.empty(), false));
            Future<?> leftovers = pool.submit(() -> {
                deleteLeftovers(target, folder, System.currentTimeMillis() - LEFTOVER_AGE.toMillis());
                return null;
            });
            boolean accepted = await(crcAccepted, pool, target, keys);
            boolean crcRefused = await(wrongCrcRefused, pool, target, keys);
            String etag = await(md5Etag, pool, target, keys);
            boolean md5Refused = await(wrongMd5Refused, pool, target, keys);
            await(plain, pool, target, keys);

            // Round 2: the CRC32 kept for the first object, and a create-only put over an existing one.
            Future<Boolean> stored = pool.submit(() -> {
                if (!accepted) {
                    return false;
                }
                OptionalLong back = target.storedCrc32(withCrc);
                return back.isPresent() && back.getAsLong() == good;
            });
            Future<Boolean> createOnly = pool.submit(() -> refusal(() -> target.put(existing, body, OptionalLong.empty(),
                    Optional.empty(), true)) instanceof PreconditionFailedException);
            boolean crcStored = await(stored, pool, target, keys);
            boolean createOnlyHonoured = await(createOnly, pool, target, keys);
            await(leftovers, pool, target, keys);

            // Round 3: the probe's own objects go, all at once.
            List<Future<?>> deletes = new ArrayList<>();
            for (String k : keys) {
                deletes.add(pool.submit(() -> {
                    target.delete(k);
                    return null;
                }));
            }
            for (Future<?> d : deletes) {
                await(d, pool, target, List.of());
            }
            boolean md5Verified = etag != null && md5Refused;
            boolean md5Etags = etag != null && HexFormat.of().formatHex(md5).equalsIgnoreCase(etag);
            ServerTraits traits = new ServerTraits(accepted, accepted && crcRefused, crcStored, createOnlyHonoured,
                    md5Verified, md5Etags);
            LOG.info("{}: {}", settings.describe(), traits);
            return traits;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface Put {
        void run() throws StoreException;
    }

    /**
     * Runs a probe put: null when it was taken, the refusal when the server refused it. Failures
     * (throttling, 5xx, I/O, access denied, a missing bucket) are no answer about the server, and are thrown.
     */
    private static StoreException refusal(Put put) throws StoreException {
        try {
            put.run();
            return null;
        } catch (StoreException e) {
            if (isFailure(e)) {
                throw e;
            }
            return e;
        }
    }

    /**
     * One answer of the probe. When a request failed, the others are waited for, the probe's objects
     * are deleted (the failure that stopped the probe is the one reported: an unreachable server fails
     * the clean-up deletes too, and those must not replace it) and the failure is thrown.
     */
    private static <T> T await(Future<T> f, ExecutorService pool, Target target, List<String> keys)
            throws StoreException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw cleanUp(new TransientStoreException("the capability probe was interrupted", null, null, e),
                    pool, target, keys);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof StoreException se) {
                throw cleanUp(se, pool, target, keys);
            }
            if (cause instanceof RuntimeException re) {
                throw cleanUp(re, pool, target, keys);
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw cleanUp(new TransientStoreException("the capability probe failed: " + cause, null, null, cause),
                    pool, target, keys);
        }
    }

    private static <E extends Exception> E cleanUp(E failure, ExecutorService pool, Target target, List<String> keys) {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(1, TimeUnit.MINUTES)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (String k : keys) {
            try {
                target.delete(k);
            } catch (StoreException | RuntimeException cleanup) {
                failure.addSuppressed(cleanup);
            }
        }
        return failure;
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

    private static boolean isFailure(StoreException e) {
        return e.isRetryable() || e instanceof dev.felix.offload.store.AccessDeniedException
                || e instanceof dev.felix.offload.store.ObjectNotFoundException
                || e instanceof dev.felix.offload.store.BucketMissingException;
    }
}
