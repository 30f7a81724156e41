package dev.felix.offload.tier;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A store in front of a real one that stores a flipped byte for the puts a predicate picks, as a store
 * that damages data without noticing would: the bad copy is what verification must catch. It checks
 * no CRC32 itself and reports none.
 */
final class CorruptingStore implements ObjectStore {

    private final ObjectStore real;
    private final Predicate<String> corrupt;

    CorruptingStore(ObjectStore real, Predicate<String> corrupt) {
        this.real = real;
        this.corrupt = corrupt;
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        if (!corrupt.test(key)) {
            return real.put(key, body, options);
        }
        try {
            byte[] bytes = body.readAll();
            bytes[bytes.length / 2] ^= 0x20;
            return real.put(key, UploadBody.ofBytes(bytes), PutOptions.defaults());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        ObjectHead h = real.head(key);
        return new ObjectHead(h.key(), h.size(), h.etag(), h.userMetadata(), OptionalLong.empty());
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        return real.readRange(key, range);
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        return real.readAll(key, maxSize, expectedCrc32);
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        return real.download(key, target, expectedCrc32);
    }

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        return real.listPage(prefix, continuation, maxKeys);
    }

    @Override
    public void delete(String key) throws StoreException {
        real.delete(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        real.deleteAll(keys);
    }

    @Override
    public Set<StoreCapability> capabilities() {
        return Set.of();
    }

    @Override
    public String describe() {
        return "corrupting(" + real.describe() + ")";
    }

    @Override
    public void close() {
        real.close();
    }
}
