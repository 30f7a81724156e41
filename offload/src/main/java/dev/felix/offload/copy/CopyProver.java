package dev.felix.offload.copy;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.BodyDigests;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * Proves, some time after the upload, that the object a manifest entry names holds the entry's
 * bytes: for an entry recorded without proof ({@code --verify none}), or one whose proof was lost
 * (see {@link dev.felix.offload.manifest.CopyProofs}), before its local segment is unlinked.
 *
 * <p>Cheaply where the server's word counts: a stored CRC32 from a server seen to refuse a wrong
 * one at upload and that keeps it apart from this process ({@link StoreCapability#CRC32_VERIFIED_ON_PUT},
 * {@link StoreCapability#CRC32_KEPT_BY_SERVER}), with one head. Or, given the local segment, where
 * the server checks Content-MD5 and its ETags are MD5s: an object put in one request (an ETag
 * without {@code -}) whose ETag is the MD5 of the local bytes, read once here together with their
 * CRC32, which must be the entry's. Otherwise the object is read back in full: a filesystem store's
 * attribute was written by this process and says nothing of rot since.
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
        return prove(entry, null);
    }

    /**
     * As {@link #prove(ManifestEntry)}, with the local segment file (null where there is none) for a
     * proof by the object's ETag.
     */
    public Outcome prove(ManifestEntry entry, Path local) throws StoreException {
        long size = entry.sizeBytes();
        long crc = Integer.toUnsignedLong(entry.objectCrc32());
        ObjectHead head = store.head(entry.objectKey());
        Set<StoreCapability> caps = store.capabilities();
        if (caps.contains(StoreCapability.CRC32_STORED) && caps.contains(StoreCapability.CRC32_VERIFIED_ON_PUT)
                && caps.contains(StoreCapability.CRC32_KEPT_BY_SERVER) && head.crc32().isPresent()) {
            return compare(entry, CopyProofKind.SERVER_CHECKSUM.label(), head.size(), head.crc32().getAsLong(), size, crc);
        }
        if (head.size() != size) {
            return compare(entry, "head", head.size(), -1, size, crc);
        }
        if (local != null && caps.contains(StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT)
                && caps.contains(StoreCapability.MD5_ETAG) && !head.etag().contains("-") && etagMatches(local, head, crc)) {
            return new Outcome(CopyProofKind.CONTENT_MD5.label(), null);
        }
        return compare(entry, CopyProofKind.READ_BACK.label(), head.size(),
                ReadBack.crc32(store, entry.objectKey(), head.size()), size, crc);
    }

    /**
     * Whether the object's ETag is the MD5 of the local segment's first {@code head.size()} bytes,
     * and those bytes have the entry's CRC32 (both from one read). Anything else, an unreadable file
     * included, leaves the proof to a read-back.
     */
    private static boolean etagMatches(Path local, ObjectHead head, long crc) {
        try {
            if (Files.size(local) < head.size()) {
                return false;
            }
            BodyDigests digests = UploadBody.ofFileRange(local, 0, head.size()).digests(Math.max(1, head.size()));
            return digests.crc32() == crc && digests.md5Etag(false).equalsIgnoreCase(head.etag());
        } catch (IOException | IllegalArgumentException e) {
            return false; // changed or gone meanwhile
        }
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
