package dev.felix.offload.pass;

import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A store in front of a real one that stores a flipped byte for the puts a predicate picks, as a store
 * that damages data without noticing would: the bad copy is what verification must catch. It checks
 * no CRC32 itself and reports none.
 */
final class CorruptingStore extends ForwardingObjectStore {

    private final ObjectStore real;
    private final Predicate<String> corrupt;
    /** CRC32s as sent with each put, when this store plays a server that keeps them unchecked; else null. */
    private final java.util.Map<String, Long> keptUnchecked;

    CorruptingStore(ObjectStore real, Predicate<String> corrupt) {
        this(real, corrupt, false);
    }

    /**
     * @param keepsSentCrc32 play a server that keeps the CRC32 a put carries without checking it, and
     *                       answers it from head ({@code CRC32_STORED} but not {@code CRC32_VERIFIED_ON_PUT})
     */
    CorruptingStore(ObjectStore real, Predicate<String> corrupt, boolean keepsSentCrc32) {
        super(real);
        this.real = real;
        this.corrupt = corrupt;
        this.keptUnchecked = keepsSentCrc32 ? new java.util.concurrent.ConcurrentHashMap<>() : null;
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        if (keptUnchecked != null && options.crc32().isPresent()) {
            keptUnchecked.put(key, options.crc32().getAsLong());
        }
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
        Long kept = keptUnchecked == null ? null : keptUnchecked.get(key);
        return new ObjectHead(h.key(), h.size(), h.etag(), h.userMetadata(),
                kept == null ? OptionalLong.empty() : OptionalLong.of(kept));
    }

    @Override
    public Set<StoreCapability> capabilities() {
        return keptUnchecked == null ? Set.of() : Set.of(StoreCapability.CRC32_STORED);
    }

    @Override
    public String describe() {
        return "corrupting(" + real.describe() + ")";
    }
}
