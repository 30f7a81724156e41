package dev.felix.offload.read;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentSource;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A segment's copy in the object store as a scan's byte source: its bytes through the
 * {@link ChunkCache}, as many as its manifest entry records. A scan that meets damage may have it
 * fetched once more, since bytes can be damaged in transit or in memory as well as in the store.
 */
final class ObjectSegmentSource implements SegmentSource {

    private static final Logger LOG = LoggerFactory.getLogger(TieredReader.class);

    /** A store's failure carried through a scan, which knows only I/O errors; its reader unwraps it. */
    static final class StoreFailure extends IOException {
        private static final long serialVersionUID = 1L;

        StoreFailure(StoreException cause) {
            super(cause.getMessage(), cause);
        }

        StoreException storeCause() {
            return (StoreException) getCause();
        }
    }

    private final String shard;
    private final ObjectIdentity object;
    private final ObjectFetcher store;
    private final ChunkCache chunks;
    private final CorruptionSite site;
    /** The chunk the scan is reading in, and its index. */
    private byte[] held;
    private long heldIndex = -1;

    ObjectSegmentSource(String shard, ObjectIdentity object, ObjectFetcher store, ChunkCache chunks, CorruptionSite site) {
        this.shard = shard;
        this.object = object;
        this.store = store;
        this.chunks = chunks;
        this.site = site;
    }

    @Override
    public long size() {
        return object.size();
    }

    /**
     * The store refusing a range inside the size the manifest records means the object is shorter
     * than the copy that was verified: damage to report as such (naming the key and byte), not a
     * store failure.
     */
    /**
     * A view of the chunk the bytes lie in (a copy only for bytes spanning chunks). The chunk the scan
     * is in is kept here, so the records inside it cost no lookup in the cache; it is dropped when
     * the scan moves on or asks for a refetch.
     */
    @Override
    public ByteBuffer read(long position, int length) throws IOException, CorruptionException {
        try {
            if (position < 0 || length < 0 || position + length > object.size()) {
                throw new IllegalArgumentException("range " + position + "+" + length + " outside " + object.key()
                        + " of " + object.size() + " bytes");
            }
            int chunkBytes = chunks.chunkBytes();
            long index = position / chunkBytes;
            int from = (int) (position - index * chunkBytes);
            if (from + (long) length > chunkBytes) {
                held = null;
                return chunks.view(object, position, length);
            }
            if (index != heldIndex || held == null) {
                held = null; // not kept past a failed fetch
                held = chunks.chunk(object, index);
                heldIndex = index;
            }
            return ByteBuffer.wrap(held, from, length).slice();
        } catch (InvalidRangeException e) {
            long actual;
            try {
                actual = store.head(object.key()).size();
            } catch (StoreException headFailed) {
                throw new StoreFailure(headFailed);
            }
            throw CorruptionException.truncated(site.at(position), "object (" + actual + " bytes stored, "
                    + object.size() + " recorded by its manifest entry)", object.size() - position,
                    Math.max(0, actual - position));
        } catch (StoreException e) {
            throw new StoreFailure(e);
        }
    }

    /**
     * Chunks are never changed once fetched (an invalidated one is dropped, not refilled), and a range
     * across two chunks is a fresh array: records may stay views of them.
     */
    @Override
    public boolean buffersStay() {
        return true;
    }

    @Override
    public boolean refetch(CorruptionException failure) {
        LOG.warn("{}: {}; fetching the bytes again", shard, failure.getMessage());
        held = null;
        chunks.invalidate(object, failure.site().position(), RecordCodec.MAX_HEADER_LENGTH + RecordCodec.MAX_PAYLOAD_BYTES);
        return true;
    }
}
