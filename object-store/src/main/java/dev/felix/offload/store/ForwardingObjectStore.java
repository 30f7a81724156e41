package dev.felix.offload.store;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * A store that hands every {@link ObjectStore} method on to another one: the base of decorators
 * (a lease in front of writes, metrics around requests, a check before the first request), which
 * override only what they change.
 *
 * <p>Requests (capabilities, puts, reads, listings, deletes) go to {@link #target()}, the wrapped
 * store unless a subclass holds them back (until a check passed, say); {@link #describe()},
 * {@link #close()} and the upload settings go to the wrapped store itself. The optional roles that
 * send requests ({@link IncompleteUploads}, {@link ObjectCopier}, {@link RequestGate}, {@link Bucket}) are not passed
 * on here, since their requests would go round the decorator: one that offers such a role implements
 * it and answers it from its accessor where the wrapped store has it. A {@link RequestHold} sends
 * nothing and is passed on: a decorator over a held store is held too.
 */
public abstract class ForwardingObjectStore implements ObjectStore {

    private final ObjectStore delegate;

    protected ForwardingObjectStore(ObjectStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The store this one wraps. */
    protected final ObjectStore delegate() {
        return delegate;
    }

    /** Where a request goes: the wrapped store, unless a subclass holds requests back or redirects them. */
    protected ObjectStore target() throws StoreException {
        return delegate;
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return target().capabilities();
    }

    @Override
    public String describe() {
        return delegate.describe();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        return target().put(key, body, options);
    }

    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return target().digestPlan(length);
    }

    @Override
    public void uploadsPacedAt(long bytesPerSecond) {
        delegate.uploadsPacedAt(bytesPerSecond);
    }

    @Override
    public Optional<String> describeUploads() {
        return delegate.describeUploads();
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        return target().head(key);
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return target().readRange(key, range);
    }

    @Override
    public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
            throws StoreException {
        target().readRangeInto(key, range, targets, filled);
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return target().readAll(key, maxSize, expectedCrc32);
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return target().download(key, target, expectedCrc32);
    }

    @Override
    public Optional<RequestHold> requestHold() {
        return delegate.requestHold();
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return target().listPage(prefix, continuation, maxKeys);
    }

    @Override
    public void delete(String key) throws StoreException {
        target().delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        target().deleteAll(keys);
    }
}
