package dev.felix.offload.root;

import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A store whose every put, delete, copy and abort first goes through the node's lease
 * ({@link NodeLease.Fence#beforeWrite}: the lease taken at the first, one listing of the leases at
 * each after), so a pass of a copy of a data root that another copy has fenced off stops at its next
 * write instead of going on deleting and uploading. For the offload pass, puts after the first list
 * nothing ({@link NodeLease.Fence#beforeCreate}): the pass confirms the lease before it records what
 * they uploaded. Reads and listings pass straight through. Closing it leaves the wrapped store open:
 * whoever opened that closes it.
 */
final class FencedStore extends ForwardingObjectStore implements IncompleteUploads, ObjectCopier {

    private final NodeLease.Fence lease;
    /** Whether every put lists the leases, or only the first (the offload pass confirms before recording). */
    private final boolean checkEachPut;

    FencedStore(ObjectStore store, NodeLease.Fence lease, boolean checkEachPut) {
        super(store);
        this.lease = lease;
        this.checkEachPut = checkEachPut;
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        if (checkEachPut) {
            lease.beforeWrite();
        } else {
            lease.beforeCreate();
        }
        return delegate().put(key, body, options);
    }

    @Override
    public void delete(String key) throws StoreException {
        lease.beforeWrite();
        delegate().delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        lease.beforeWrite();
        delegate().deleteAll(keys);
    }

    /** Offered where the wrapped store has multipart uploads, each abort going through the lease. */
    @Override
    public Optional<IncompleteUploads> incompleteUploads() {
        return delegate().incompleteUploads().map(uploads -> this);
    }

    /** Offered where the wrapped store copies inside itself, each copy going through the lease. */
    @Override
    public Optional<ObjectCopier> copier() {
        return delegate().copier().map(copier -> this);
    }

    /** The wrapped store's, when it has multipart uploads; nothing otherwise. */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        Optional<IncompleteUploads> uploads = delegate().incompleteUploads();
        if (uploads.isEmpty()) {
            return List.of();
        }
        lease.beforeMaybeWrite(); // checked, not taken: most sweeps find nothing to abort
        return uploads.get().abortIncompleteUploads(prefix, startedBefore);
    }

    /** The wrapped store's server-side copy, the lease checked first; refused where it has none. */
    @Override
    public PutResult copy(String sourceKey, String targetKey) throws StoreException {
        Optional<ObjectCopier> copier = delegate().copier();
        if (copier.isEmpty()) {
            throw new CapabilityMissingException(delegate().describe() + " copies nothing inside itself", targetKey,
                    StoreAnswer.NONE, null);
        }
        lease.beforeWrite();
        return copier.get().copy(sourceKey, targetKey);
    }

    @Override
    public void close() {
        // the wrapped store is its opener's to close
    }
}
