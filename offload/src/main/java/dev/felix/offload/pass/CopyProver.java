package dev.felix.offload.pass;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;

import java.util.Set;
import java.util.zip.CRC32;

/**
 * Proves, some time after the upload, that the object a manifest entry names holds the entry's
 * bytes: for an entry recorded without proof ({@code --verify none}), or one whose proof was lost
 * (see {@link dev.felix.offload.manifest.CopyProofs}), before its local segment is unlinked.
 *
 * <p>Cheaply where the server's word counts: a stored CRC32 from a server seen to refuse a wrong
 * one at upload and that keeps it apart from this process ({@link StoreCapability#CRC32_VERIFIED_ON_PUT},
 * {@link StoreCapability#CRC32_KEPT_BY_SERVER}), with one head. Otherwise the object is read back in
 * full: a filesystem store's attribute was written by this process and says nothing of rot since.
 */
public final class CopyProver {

    /** What a proof found: how it was proven, or why not. */
    public record Outcome(String how, String mismatch) {
        public boolean proven() {
            return mismatch == null;
        }
    }

    private final ObjectStore store;

    public CopyProver(ObjectStore store) {
        this.store = store;
    }

    /** Proves {@code entry}'s copy; store failures are thrown, a copy that differs is an outcome. */
    public Outcome prove(ManifestEntry entry) throws StoreException {
        long size = entry.sizeBytes();
        long crc = Integer.toUnsignedLong(entry.objectCrc32());
        ObjectHead head = store.head(entry.objectKey());
        Set<StoreCapability> caps = store.capabilities();
        if (caps.contains(StoreCapability.CRC32_STORED) && caps.contains(StoreCapability.CRC32_VERIFIED_ON_PUT)
                && caps.contains(StoreCapability.CRC32_KEPT_BY_SERVER) && head.crc32().isPresent()) {
            return compare(entry, "server-checksum", head.size(), head.crc32().getAsLong(), size, crc);
        }
        if (head.size() != size) {
            return compare(entry, "head", head.size(), -1, size, crc);
        }
        CRC32 read = new CRC32();
        long at = 0;
        while (at < head.size()) {
            int n = (int) Math.min(ShardOffload.READ_BACK_CHUNK, head.size() - at);
            read.update(store.readRange(entry.objectKey(), ByteRange.of(at, n)));
            at += n;
        }
        return compare(entry, "read-back", head.size(), read.getValue(), size, crc);
    }

    private static Outcome compare(ManifestEntry e, String how, long storedSize, long storedCrc, long size, long crc) {
        if (storedSize == size && storedCrc == crc) {
            return new Outcome(how, null);
        }
        return new Outcome(how, String.format("the copy of segment %s at %s is not proven by %s: the store holds %d "
                        + "bytes%s, the manifest entry records %d bytes with crc32 %08x; the local segment is kept",
                Long.toUnsignedString(e.segmentId()), e.objectKey(), how, storedSize,
                storedCrc < 0 ? "" : String.format(" with crc32 %08x", storedCrc), size, crc));
    }
}
