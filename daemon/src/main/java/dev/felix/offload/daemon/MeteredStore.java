package dev.felix.offload.daemon;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A store that counts what passes through it: put latency and every failure by kind and
 * operation. It changes nothing else; every call goes to the store it wraps.
 */
final class MeteredStore implements ObjectStore, IncompleteUploads {

    private final ObjectStore store;
    private final DaemonMetrics metrics;
    private final AtomicLong lastSuccessNanos = new AtomicLong();

    MeteredStore(ObjectStore store, DaemonMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    /** {@link System#nanoTime()} of the last call the store answered, 0 before any. */
    long lastAnswerNanos() {
        return lastSuccessNanos.get();
    }

    /** A call to the wrapped store. */
    @FunctionalInterface
    private interface StoreCall<T> {
        T run() throws StoreException;
    }

    /** Runs {@code call}, noting an answer, or counting the failure under {@code operation} and rethrowing it. */
    private <T> T observed(String operation, StoreCall<T> call) throws StoreException {
        try {
            T result = call.run();
            lastSuccessNanos.set(System.nanoTime());
            return result;
        } catch (StoreException | RuntimeException e) {
            metrics.storeError(operation, e);
            throw e;
        }
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        long start = System.nanoTime();
        PutResult r = observed("put", () -> store.put(key, body, options));
        metrics.uploads().record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        return r;
    }

    @Override
    public java.util.Optional<dev.felix.offload.store.DigestPlan> digestPlan(long length) throws StoreException {
        return store.digestPlan(length);
    }

    @Override
    public void uploadsPacedAt(long bytesPerSecond) {
        store.uploadsPacedAt(bytesPerSecond);
    }

    @Override
    public java.util.Optional<String> describeUploads() {
        return store.describeUploads();
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return observed("head", () -> store.head(key));
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return observed("get", () -> store.readRange(key, range));
    }

    @Override
    public void readRangeInto(String key, ByteRange range, java.util.List<byte[]> targets,
            java.util.function.IntConsumer filled) throws StoreException {
        observed("get", () -> {
            store.readRangeInto(key, range, targets, filled);
            return null;
        });
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return observed("get", () -> store.readAll(key, maxSize, expectedCrc32));
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return observed("get", () -> store.download(key, target, expectedCrc32));
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return observed("list", () -> store.listPage(prefix, continuation, maxKeys));
    }

    @Override
    public void delete(String key) throws StoreException {
        observed("delete", () -> {
            store.delete(key);
            return null;
        });
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        observed("delete", () -> {
            store.deleteAll(keys);
            return null;
        });
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return observed("probe", store::capabilities);
    }

    /** The wrapped store's, when it has multipart uploads; nothing otherwise (there is nothing to abort). */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        if (!(store instanceof IncompleteUploads uploads)) {
            return List.of();
        }
        return observed("abort-uploads", () -> uploads.abortIncompleteUploads(prefix, startedBefore));
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        store.close();
    }
}
