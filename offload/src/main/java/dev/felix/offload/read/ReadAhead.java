package dev.felix.offload.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * A chunk cache's window ahead of sequential readers: what it knows of how readers move
 * through each object, and which chunks to ask for ahead of them. It fetches nothing itself; each
 * method answers the run of chunks the cache should ask for, or null for none.
 *
 * <p>A reader that steps from chunk {@code i} into {@code i + 1} is taken for a sequential one and
 * kept up to {@code windowChunks} chunks ahead, the missing ones asked for together once half the
 * window is used. A reader that jumps only ever gets the chunks it touches: a read that says it
 * {@link #jumpedTo} a position is not taken for a sequential one when it, or the next jump, lands in
 * the chunk after the last. Safe for readers' threads at once: each object's state is guarded by
 * itself, and at most 256 objects are remembered.
 */
final class ReadAhead {

    /** Chunks {@code from..to} of an object to ask for (none when {@code from > to}). */
    record Run(ObjectIdentity object, long from, long to) {
    }

    /**
     * How a reader has been moving through one object: the chunk it last touched, the last asked for
     * ahead, and whether its current read began with a jump (found its start through the index).
     */
    private static final class Stream {
        long last;
        long ahead;
        boolean jumped;

        Stream(long last, long ahead) {
            this.last = last;
            this.ahead = ahead;
        }
    }

    private final int chunkBytes;
    private final int windowChunks;
    private final Cache<ObjectIdentity, Stream> streams = Caffeine.newBuilder().maximumSize(256).build();

    /** @param windowChunks chunks kept ahead of a sequential reader; 0 turns read-ahead off */
    ReadAhead(int chunkBytes, int windowChunks) {
        this.chunkBytes = chunkBytes;
        this.windowChunks = windowChunks;
    }

    /** Notes a reader touching chunk {@code index}; answers what keeps the window ahead of a sequential one. */
    Run touched(ObjectIdentity object, long index) {
        if (windowChunks == 0) {
            return null;
        }
        long from;
        long to;
        Stream s = streams.get(object, o -> new Stream(index, index));
        synchronized (s) {
            if (index == s.last) {
                return null;
            }
            if (s.jumped) {
                // A read that jumped here steps on to the next chunk when its record crosses into it,
                // and a random reader's next jump may land in the chunk after its last one: neither
                // says the reader is sequential. It proves that by continuing where it stopped.
                s.last = index;
                s.ahead = index;
                return null;
            }
            if (index != s.last + 1) {
                s.last = index; // a jump: a random reader, or one starting over
                s.ahead = index;
                return null;
            }
            s.last = index;
            if (s.ahead - index > windowChunks / 2) {
                return null; // enough already asked for
            }
            from = Math.max(s.ahead, index) + 1;
            to = Math.min(index + windowChunks, lastChunk(object));
            s.ahead = Math.max(s.ahead, to);
        }
        return new Run(object, from, to);
    }

    /**
     * Notes that a read starts at {@code position} by a jump (a position found in the index, not where
     * an earlier read stopped): until {@link #continuing} or {@link #expect}, the chunks it touches
     * bring nothing ahead, however they follow each other.
     */
    void jumpedTo(ObjectIdentity object, long position) {
        if (windowChunks == 0 || position < 0 || position >= object.size()) {
            return;
        }
        long index = position / chunkBytes;
        Stream s = streams.get(object, o -> new Stream(index, index));
        synchronized (s) {
            s.last = index;
            s.ahead = index; // chunks still in flight from an earlier window stay cached
            s.jumped = true;
        }
    }

    /** Notes that a read of the object starts where the last one stopped: stepping on keeps a window again. */
    void continuing(ObjectIdentity object) {
        Stream s = streams.getIfPresent(object);
        if (s == null) {
            return;
        }
        synchronized (s) {
            s.jumped = false;
        }
    }

    /** For a sequential reader about to move on to {@code next}: its first chunks, unless a window there is under way. */
    Run continueInto(ObjectIdentity next) {
        if (windowChunks == 0 || next.size() == 0) {
            return null;
        }
        Stream s = streams.get(next, o -> new Stream(-1, -1));
        long to;
        synchronized (s) {
            if (s.last != -1 || s.ahead >= 0) {
                return null; // already under way
            }
            to = Math.min(windowChunks - 1, lastChunk(next));
            s.ahead = to;
        }
        return new Run(next, 0, to);
    }

    /** For a read that wants {@code bytes} from {@code position}: the chunks they cover, at most a window; none for a chunk or less. */
    Run expect(ObjectIdentity object, long position, long bytes) {
        if (windowChunks == 0 || bytes <= chunkBytes || position < 0 || position >= object.size()) {
            return null;
        }
        long index = position / chunkBytes;
        long wanted = (position - index * chunkBytes + bytes + chunkBytes - 1) / chunkBytes;
        long to = Math.min(index + Math.min(windowChunks, wanted) - 1, lastChunk(object));
        Stream s = streams.get(object, o -> new Stream(index, index - 1));
        synchronized (s) {
            s.last = index;
            s.ahead = s.ahead >= index ? Math.max(s.ahead, to) : to;
        }
        return new Run(object, index, to);
    }

    /** Whether a reader has been moving through {@code object} chunk after chunk. */
    boolean sequential(ObjectIdentity object) {
        Stream s = streams.getIfPresent(object);
        if (s == null) {
            return false;
        }
        synchronized (s) {
            return !s.jumped && s.ahead > s.last;
        }
    }

    /** Forgets how readers moved through {@code object}. */
    void forget(ObjectIdentity object) {
        streams.invalidate(object);
    }

    private long lastChunk(ObjectIdentity object) {
        return (object.size() - 1) / chunkBytes;
    }
}
