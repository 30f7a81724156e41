package dev.felix.offload.store.remote;

import dev.felix.offload.store.RetryPolicy;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreStoppedException;

/**
 * How a {@code RemoteStore} sends a request: under the settings' {@link RetryPolicy}, refused without
 * being sent once {@link #stopRequests()} was called (a retry included), and its failure translated by
 * the client ({@link S3Wire#translate}) into the typed {@link StoreException} tree, with the CA bundle's
 * part told where a TLS handshake failed ({@link CaBundle#explain}). Only the abort of an open upload
 * goes out after a stop ({@link #sent}).
 */
final class WireCalls {

    /** One request on the wire; whatever it throws is translated. */
    @FunctionalInterface
    interface WireCall<T> {
        T run() throws Exception;
    }

    private final RemoteStoreSettings settings;
    private final S3Wire wire;
    /** Set by {@link #stopRequests()}: no request starts any more but the abort of an open upload. */
    private volatile boolean stopped;

    WireCalls(RemoteStoreSettings settings, S3Wire wire) {
        this.settings = settings;
        this.wire = wire;
    }

    /** From now on no request starts but those sent through {@link #sent}. */
    void stopRequests() {
        stopped = true;
    }

    /**
     * Whether a request carries a digest of its body for the server to check (a {@code Content-MD5} or
     * {@code x-amz-checksum-crc32} header): a refusal of one that does is read with
     * {@link S3ErrorTranslation#ofBodyDigestRequest}.
     */
    enum BodyDigest {
        NONE,
        CARRIED;

        static BodyDigest of(boolean carried) {
            return carried ? CARRIED : NONE;
        }
    }

    /** The call under the retry policy, each attempt refused once requests are stopped. */
    <T> T call(String operation, String key, WireCall<T> call) throws StoreException {
        return call(operation, key, BodyDigest.NONE, call);
    }

    /** As {@link #call(String, String, WireCall)}, for a request that may carry a body digest. */
    <T> T call(String operation, String key, BodyDigest digest, WireCall<T> call) throws StoreException {
        return settings.retryPolicy().run(() -> once(operation, key, digest, call));
    }

    /** One attempt, refused once requests are stopped. */
    <T> T once(String operation, String key, WireCall<T> call) throws StoreException {
        return once(operation, key, BodyDigest.NONE, call);
    }

    /** As {@link #once(String, String, WireCall)}, for a request that may carry a body digest. */
    <T> T once(String operation, String key, BodyDigest digest, WireCall<T> call) throws StoreException {
        if (stopped) {
            throw new StoreStoppedException(operation + (key == null ? "" : " of key '" + key + "'")
                    + " not sent: the process is stopping", key);
        }
        return sent(operation, key, digest, call);
    }

    /** One attempt, sent whether or not requests were stopped (only aborts of open uploads are). */
    <T> T sent(String operation, String key, WireCall<T> call) throws StoreException {
        return sent(operation, key, BodyDigest.NONE, call);
    }

    private <T> T sent(String operation, String key, BodyDigest digest, WireCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (StoreException e) {
            throw e;
        } catch (Exception e) {
            // Clients wrap what their threads throw, errors too (the MinIO client's futures do): an
            // OutOfMemoryError is the JVM's, not a store failure to retry, and goes on as itself.
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof VirtualMachineError vm) {
                    throw vm;
                }
            }
            StoreException translated = wire.translate(operation, key, e);
            if (digest == BodyDigest.CARRIED) {
                translated = S3ErrorTranslation.ofBodyDigestRequest(translated);
            }
            throw CaBundle.explain(translated, e, operation, key, settings);
        }
    }
}
