package dev.felix.offload.tier;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * Proves, now, that a manifest entry's object still holds the entry's bytes: its size and CRC32.
 * Where a server keeps the CRC32 itself and looks after the bytes
 * ({@link StoreCapability#CRC32_STORED} with {@link StoreCapability#CRC32_KEPT_BY_SERVER}) its head
 * answers, at no transfer; elsewhere (the filesystem store's attribute was written by this process
 * and says nothing of rot since) the object is read back whole.
 */
public final class CopyProof {

    static final int CHUNK = 8 * 1024 * 1024;

    private CopyProof() {
    }

    /**
     * The outcome of a proof.
     *
     * @param how      {@code server-checksum} or {@code read-back} when the copy is proven, else null
     * @param mismatch how the object differs from its entry, when it does
     */
    public record Outcome(String how, String mismatch) {
        public boolean proven() {
            return how != null;
        }
    }

    /** Proves the copy of {@code entry}, as the class comment says. */
    public static Outcome prove(ObjectStore store, ManifestEntry entry) throws StoreException {
        String key = entry.objectKey();
        long crc = Integer.toUnsignedLong(entry.objectCrc32());
        ObjectHead head = store.head(key);
        if (head.size() != entry.sizeBytes()) {
            return new Outcome(null, key + " holds " + head.size() + " bytes, its entry records " + entry.sizeBytes());
        }
        Set<StoreCapability> caps = store.capabilities();
        if (caps.contains(StoreCapability.CRC32_STORED) && caps.contains(StoreCapability.CRC32_KEPT_BY_SERVER)
                && head.crc32().isPresent()) {
            if (head.crc32().getAsLong() != crc) {
                return new Outcome(null, String.format("%s: the server keeps crc32 %08x, its entry records %08x", key,
                        head.crc32().getAsLong(), crc));
            }
            return new Outcome("server-checksum", null);
        }
        CRC32 read = new CRC32();
        for (long at = 0; at < head.size(); ) {
            int n = (int) Math.min(CHUNK, head.size() - at);
            read.update(store.readRange(key, ByteRange.of(at, n)));
            at += n;
        }
        if (read.getValue() != crc) {
            return new Outcome(null, String.format("%s reads back with crc32 %08x, its entry records %08x", key, read.getValue(), crc));
        }
        return new Outcome("read-back", null);
    }

    /**
     * The first byte at which {@code local} differs from the entry's object (ranged reads, stopping at
     * the first differing chunk), the shorter one's length when one is a prefix of the other, or -1
     * when they are equal.
     */
    public static long firstDifference(ObjectStore store, ManifestEntry entry, Path local)
            throws StoreException, IOException {
        String key = entry.objectKey();
        long remoteSize = store.head(key).size();
        try (FileChannel ch = FileChannel.open(local, StandardOpenOption.READ)) {
            long localSize = ch.size();
            long common = Math.min(localSize, remoteSize);
            ByteBuffer buf = ByteBuffer.allocate((int) Math.min(CHUNK, Math.max(common, 1)));
            for (long at = 0; at < common; ) {
                int n = (int) Math.min(buf.capacity(), common - at);
                byte[] remote = store.readRange(key, ByteRange.of(at, n));
                buf.clear().limit(n);
                while (buf.hasRemaining()) {
                    if (ch.read(buf, at + buf.position()) < 0) {
                        return at + buf.position(); // the file shrank meanwhile
                    }
                }
                byte[] mine = Arrays.copyOf(buf.array(), n);
                int i = Arrays.mismatch(mine, remote);
                if (i >= 0) {
                    return at + i;
                }
                at += n;
            }
            return localSize == remoteSize ? -1 : common;
        }
    }
}
