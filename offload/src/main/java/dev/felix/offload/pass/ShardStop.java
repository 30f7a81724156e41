package dev.felix.offload.pass;

/**
 * Why a shard's part of an offload pass ended before every eligible segment was offloaded, as a
 * type, so callers decide on it rather than on the problem's text (which is for people).
 */
public sealed interface ShardStop {
    /** The pass was asked to stop (a daemon shutting down): no problem; the next pass goes on here. */
    record Requested(long beforeSegment) implements ShardStop {
    }

    /** The copy of {@code segment} failed verification on each of its {@code attempts} uploads. */
    record VerificationFailed(long segment, int attempts) implements ShardStop {
    }

    /** The segment's key already holds other bytes. */
    record Collision(KeyCollision collision) implements ShardStop {
    }

    /**
     * A sealed local segment lies partly under the manifest's entries (their boundaries differ, as a
     * restore beside a re-created log leaves them): its offsets {@code firstUncopied..last} have no
     * copy and cannot be recorded without overlapping an entry.
     */
    record PartlyCovered(long segment, long first, long firstUncopied, long last) implements ShardStop {
    }

    /** Anything else (damage, a store failure, a broker's change): the result's problem says what. */
    record Failed() implements ShardStop {
    }
}
