package dev.felix.offload.pass;

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

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntConsumer;

/**
 * The store as a pass's shards see it while the node claim is still being checked on a thread of its
 * own (see {@link OffloadPass}): a shard may plan and read its segments meanwhile
 * ({@link #digestPlan} answers at once), but every request to the store waits until the check
 * passed, and fails without being sent if it did not. So nothing is uploaded, deleted or even asked
 * of the store on a shard's behalf before the claim is known to be this root's.
 */
final class ClaimGatedStore implements ObjectStore {

    /**
     * A request this store did not send because the claim check did not pass (or was interrupted): the
     * pass reports the check's failure once, so a shard says nothing more of it.
     */
    static final class NotSentException extends StoreRejectedException {
        private static final long serialVersionUID = 1L;

        NotSentException(String message, Throwable cause) {
            super(message, null, null, cause);
        }
    }

    private final ObjectStore store;
    private final CountDownLatch checked = new CountDownLatch(1);
    private volatile Throwable refused;
    /** Where requests go once the check passed: the store through the node's lease, as the check gave it. */
    private volatile ObjectStore target;

    ClaimGatedStore(ObjectStore store) {
        this.store = store;
    }

    /** The check passed: requests go, through {@code through} (the store behind the node's lease). */
    void passed(ObjectStore through) {
        target = through;
        checked.countDown();
    }

    /** The check failed (a refusal, or a store that did not answer): no request goes. */
    void failed(Throwable why) {
        refused = why;
        checked.countDown();
    }

    private ObjectStore open() throws StoreException {
        try {
            checked.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NotSentException("not sent: interrupted while the node claim was checked", e);
        }
        Throwable why = refused;
        if (why != null) {
            // the pass reports the check's failure itself, once
            throw new NotSentException("not sent: the node claim check did not pass", why);
        }
        return target;
    }

    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return store.digestPlan(length);
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        // the pass's owner closes the store it wraps
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return open().capabilities();
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        return open().put(key, body, options);
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return open().head(key);
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return open().readRange(key, range);
    }

    @Override
    public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
            throws StoreException {
        open().readRangeInto(key, range, targets, filled);
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return open().readAll(key, maxSize, expectedCrc32);
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return open().download(key, target, expectedCrc32);
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return open().listPage(prefix, continuation, maxKeys);
    }

    @Override
    public void delete(String key) throws StoreException {
        open().delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        open().deleteAll(keys);
    }

    @Override
    public void uploadsPacedAt(long bytesPerSecond) {
        store.uploadsPacedAt(bytesPerSecond);
    }

    @Override
    public Optional<String> describeUploads() {
        return store.describeUploads();
    }
}
