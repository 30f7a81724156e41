package dev.felix.offload.cli;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DigestPlan;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * A store whose first request is preceded by a check that needs the store too (the reader's node-claim
 * check), so a command that turns out to need nothing from the store (a {@code read} served by local
 * segments) never contacts it: no client is built and no request is sent. Every call goes to the
 * store it wraps once the check ran; a check that fails fails that first call, and every later one
 * (an I/O failure of a local file it reads as a {@link StoreRejectedException} naming it).
 */
final class FirstUseStore implements ObjectStore {

    /** What runs once, before the first request. */
    @FunctionalInterface
    interface Check {
        void run(ObjectStore store) throws IOException, StoreException;
    }

    private final ObjectStore store;
    private final Check check;
    private boolean checked;
    private StoreException failure;
    private RuntimeException refusal;

    FirstUseStore(ObjectStore store, Check check) {
        this.store = store;
        this.check = check;
    }

    /** Whether the store was needed (and so checked). */
    synchronized boolean used() {
        return checked;
    }

    private synchronized ObjectStore ready() throws StoreException {
        if (!checked) {
            checked = true;
            try {
                check.run(store);
            } catch (StoreException e) {
                failure = e;
            } catch (IOException e) {
                // a local file the check reads (the root's node id, say): the read fails as a store read would
                failure = new StoreRejectedException(dev.felix.offload.log.IoProblem.describe(e), null, null, e);
            } catch (RuntimeException e) {
                // a refusal (a missing bucket is a usage error): every later call meets it too
                refusal = e;
            }
        }
        if (refusal != null) {
            throw refusal;
        }
        if (failure != null) {
            throw failure;
        }
        return store;
    }

    /**
     * What the check refused the store with, other than a store failure (a missing bucket, as a usage
     * error), for the command to report as its own whatever a reader made of it on the way.
     */
    synchronized Optional<RuntimeException> refusal() {
        return Optional.ofNullable(refusal);
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return ready().capabilities();
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        store.close();
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        return ready().put(key, body, options);
    }

    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return ready().digestPlan(length);
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return ready().head(key);
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return ready().readRange(key, range);
    }

    @Override
    public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
            throws StoreException {
        ready().readRangeInto(key, range, targets, filled);
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return ready().readAll(key, maxSize, expectedCrc32);
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return ready().download(key, target, expectedCrc32);
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return ready().listPage(prefix, continuation, maxKeys);
    }

    @Override
    public void delete(String key) throws StoreException {
        ready().delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        ready().deleteAll(keys);
    }
}
