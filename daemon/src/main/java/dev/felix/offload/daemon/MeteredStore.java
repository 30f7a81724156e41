package dev.felix.offload.daemon;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.RequestGate;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreStoppedException;
import dev.felix.offload.store.UploadBody;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store that counts what passes through it: put latency and every failure by kind and
 * operation, and tells the {@link StoreHealth} what each call found. Once {@link #stopRequests()}
 * is called no call starts any more (the wrapped store is told the same, so no retry or further part
 * of an upload under way starts either). It changes nothing else; every call goes to the store it wraps.
 *
 * <p>{@link #unit()} gives a view for one unit of work (a pass, the start-up probe), counted the
 * same, whose calls' outcomes tell the health whether that unit found the store working when
 * {@link #endUnit()} is called.
 */
final class MeteredStore extends ForwardingObjectStore implements IncompleteUploads, RequestGate {

    /** What every view of one store shares. */
    private static final class Shared {
        volatile boolean stopped;
        final AtomicInteger inFlight = new AtomicInteger();
    }

    private final DaemonMetrics metrics;
    private final StoreHealth health;
    private final Shared shared;
    /** Null for the store itself; a unit's view otherwise (which does not close the store). */
    private final StoreHealth.Unit unit;

    MeteredStore(ObjectStore store, DaemonMetrics metrics) {
        this(store, metrics, new StoreHealth(store.describe()));
    }

    MeteredStore(ObjectStore store, DaemonMetrics metrics, StoreHealth health) {
        this(store, metrics, health, new Shared(), null);
    }

    private MeteredStore(ObjectStore store, DaemonMetrics metrics, StoreHealth health, Shared shared,
            StoreHealth.Unit unit) {
        super(store);
        this.metrics = metrics;
        this.health = health;
        this.shared = shared;
        this.unit = unit;
    }

    /** A view of this store for one unit of work; {@link #endUnit()} tells the health what its calls found. */
    MeteredStore unit() {
        return new MeteredStore(delegate(), metrics, health, shared, new StoreHealth.Unit());
    }

    /** Ends a unit's view: the health hears whether every call it made was answered. */
    void endUnit() {
        if (unit != null) {
            health.ended(unit);
        }
    }

    StoreHealth health() {
        return health;
    }

    /** Calls under way right now, over every view. */
    int inFlight() {
        return shared.inFlight.get();
    }

    /** A call to the wrapped delegate(). */
    @FunctionalInterface
    private interface StoreCall<T> {
        T run() throws StoreException;
    }

    /** Runs {@code call}, noting an answer, or counting the failure under {@code operation} and rethrowing it. */
    private <T> T observed(String operation, StoreCall<T> call) throws StoreException {
        return observed(operation, true, call);
    }

    /** @param answers whether success means the server answered (capabilities may come from what was found before) */
    private <T> T observed(String operation, boolean answers, StoreCall<T> call) throws StoreException {
        if (shared.stopped) {
            throw new StoreStoppedException(operation + " not started: the daemon is stopping", null);
        }
        shared.inFlight.incrementAndGet();
        try {
            T result = call.run();
            if (answers) {
                long now = System.nanoTime();
                health.answered(now);
                if (unit != null) {
                    unit.answered(now);
                }
            }
            return result;
        } catch (StoreStoppedException e) {
            throw e; // refused by the stop, not the store's doing
        } catch (StoreException | RuntimeException e) {
            metrics.storeError(operation, e);
            long now = System.nanoTime();
            if (StoreHealth.answeredAboutAnObject(e)) {
                health.answered(now); // a 404 for a key is an answer: the store works
                if (unit != null) {
                    unit.answered(now);
                }
            } else {
                health.failed(operation, e, now);
                if (unit != null && StoreHealth.unavailable(e)) {
                    unit.failed();
                }
            }
            throw e;
        } finally {
            shared.inFlight.decrementAndGet();
        }
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        long start = System.nanoTime();
        PutResult r = observed("put", () -> delegate().put(key, body, options));
        metrics.uploads().record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        return r;
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return observed("head", () -> delegate().head(key));
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return observed("get", () -> delegate().readRange(key, range));
    }

    @Override
    public void readRangeInto(String key, ByteRange range, java.util.List<byte[]> targets,
            java.util.function.IntConsumer filled) throws StoreException {
        observed("get", () -> {
            delegate().readRangeInto(key, range, targets, filled);
            return null;
        });
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return observed("get", () -> delegate().readAll(key, maxSize, expectedCrc32));
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return observed("get", () -> delegate().download(key, target, expectedCrc32));
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return observed("list", () -> delegate().listPage(prefix, continuation, maxKeys));
    }

    @Override
    public void delete(String key) throws StoreException {
        observed("delete", () -> {
            delegate().delete(key);
            return null;
        });
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        observed("delete", () -> {
            delegate().deleteAll(keys);
            return null;
        });
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        // found out once and remembered: a later success need not have sent anything
        return observed("probe", false, delegate()::capabilities);
    }

    /** Offered where the wrapped store has multipart uploads, each abort metered. */
    @Override
    public Optional<IncompleteUploads> incompleteUploads() {
        return delegate().incompleteUploads().map(uploads -> this);
    }

    /** Always offered: this store stops its own requests, and the wrapped store's where it can. */
    @Override
    public Optional<RequestGate> requestGate() {
        return Optional.of(this);
    }

    /** The wrapped store's, when it has multipart uploads; nothing otherwise (there is nothing to abort). */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        Optional<IncompleteUploads> uploads = delegate().incompleteUploads();
        if (uploads.isEmpty()) {
            return List.of();
        }
        return observed("abort-uploads", () -> uploads.get().abortIncompleteUploads(prefix, startedBefore));
    }

    @Override
    public void stopRequests() {
        shared.stopped = true;
        delegate().requestGate().ifPresent(RequestGate::stopRequests);
    }

    @Override
    public List<String> abortOpenUploads() {
        return delegate().requestGate().map(RequestGate::abortOpenUploads).orElse(List.of());
    }

    /** Closes the store; a unit's view closes nothing. */
    @Override
    public void close() {
        if (unit == null) {
            delegate().close();
        }
    }
}
