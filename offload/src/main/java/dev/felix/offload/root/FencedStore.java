package dev.felix.offload.root;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DigestPlan;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.StoreAnswer;
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
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * A store whose every put, delete, copy and abort first goes through the node's lease
 * ({@link NodeLease.Fence#beforeWrite}: the lease taken at the first, one listing of the leases at
 * each after), so a pass of a copy of a data root that another copy has fenced off stops at its next
 * write instead of going on deleting and uploading. Reads and listings pass straight through. Closing it leaves the wrapped store open:
 * whoever opened that closes it.
 */
final class FencedStore implements ObjectStore, IncompleteUploads, ObjectCopier {

    private final ObjectStore store;
    private final NodeLease.Fence lease;

    FencedStore(ObjectStore store, NodeLease.Fence lease) {
        this.store = store;
        this.lease = lease;
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        lease.beforeWrite();
        return store.put(key, body, options);
    }

    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return store.digestPlan(length);
    }

    @Override
    public void delete(String key) throws StoreException {
        lease.beforeWrite();
        store.delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        lease.beforeWrite();
        store.deleteAll(keys);
    }

    /** The wrapped store's, when it has multipart uploads; nothing otherwise. */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        if (!(store instanceof IncompleteUploads uploads)) {
            return List.of();
        }
        lease.beforeMaybeWrite(); // checked, not taken: most sweeps find nothing to abort
        return uploads.abortIncompleteUploads(prefix, startedBefore);
    }

    /** The wrapped store's server-side copy, the lease checked first; refused where it has none. */
    @Override
    public PutResult copy(String sourceKey, String targetKey) throws StoreException {
        if (!(store instanceof ObjectCopier copier)) {
            throw new CapabilityMissingException(store.describe() + " copies nothing inside itself", targetKey,
                    StoreAnswer.NONE, null);
        }
        lease.beforeWrite();
        return copier.copy(sourceKey, targetKey);
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return store.head(key);
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return store.readRange(key, range);
    }

    @Override
    public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
            throws StoreException {
        store.readRangeInto(key, range, targets, filled);
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return store.readAll(key, maxSize, expectedCrc32);
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return store.download(key, target, expectedCrc32);
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return store.listPage(prefix, continuation, maxKeys);
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return store.capabilities();
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        // the wrapped store is its opener's to close
    }
}
