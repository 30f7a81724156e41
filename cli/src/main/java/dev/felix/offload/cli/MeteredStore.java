package dev.felix.offload.cli;

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

    private void answered() {
        lastSuccessNanos.set(System.nanoTime());
    }

    private void failed(String operation, Exception e) {
        metrics.storeError(operation, e);
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        long start = System.nanoTime();
        try {
            PutResult r = store.put(key, body, options);
            metrics.uploads().record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
            answered();
            return r;
        } catch (StoreException | RuntimeException e) {
            failed("put", e);
            throw e;
        }
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        try {
            ObjectHead h = store.head(key);
            answered();
            return h;
        } catch (StoreException | RuntimeException e) {
            failed("head", e);
            throw e;
        }
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        try {
            byte[] b = store.readRange(key, range);
            answered();
            return b;
        } catch (StoreException | RuntimeException e) {
            failed("get", e);
            throw e;
        }
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        try {
            byte[] b = store.readAll(key, maxSize, expectedCrc32);
            answered();
            return b;
        } catch (StoreException | RuntimeException e) {
            failed("get", e);
            throw e;
        }
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        try {
            DownloadResult r = store.download(key, target, expectedCrc32);
            answered();
            return r;
        } catch (StoreException | RuntimeException e) {
            failed("get", e);
            throw e;
        }
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        try {
            ListPage p = store.listPage(prefix, continuation, maxKeys);
            answered();
            return p;
        } catch (StoreException | RuntimeException e) {
            failed("list", e);
            throw e;
        }
    }

    @Override
    public void delete(String key) throws StoreException {
        try {
            store.delete(key);
            answered();
        } catch (StoreException | RuntimeException e) {
            failed("delete", e);
            throw e;
        }
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        try {
            store.deleteAll(keys);
            answered();
        } catch (StoreException | RuntimeException e) {
            failed("delete", e);
            throw e;
        }
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        try {
            Set<StoreCapability> c = store.capabilities();
            answered();
            return c;
        } catch (StoreException | RuntimeException e) {
            failed("probe", e);
            throw e;
        }
    }

    /** The wrapped store's, when it has multipart uploads; nothing otherwise (there is nothing to abort). */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        if (!(store instanceof IncompleteUploads uploads)) {
            return List.of();
        }
        try {
            List<String> aborted = uploads.abortIncompleteUploads(prefix, startedBefore);
            answered();
            return aborted;
        } catch (StoreException | RuntimeException e) {
            failed("abort-uploads", e);
            throw e;
        }
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
