package dev.felix.offload.copy;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Where a local segment and its entry's object part: the local side of a {@code local-mismatch}
 * (scrub, retention). Proving a copy against its entry is {@link CopyProver}'s.
 */
public final class CopyDifference {

    static final int CHUNK = 8 * 1024 * 1024;

    private CopyDifference() {
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
