package dev.felix.offload.log.side;

import java.util.Objects;

/**
 * What a shard's {@code ballot} file says: the generation a leader was accepted at, and that leader's
 * node id. An empty leader is a generation given up: no leader is accepted at it, this broker included,
 * and only a newer generation replaces it.
 *
 * @param generation the generation the leader was accepted at, an unsigned 64-bit value
 * @param leader     the leader's node id, at most {@link #MAX_LEADER_BYTES} bytes of UTF-8; empty for a
 *                   generation given up
 */
public record Ballot(long generation, String leader) {

    /** The longest leader id, in UTF-8 bytes. */
    public static final int MAX_LEADER_BYTES = 1024;

    /**
     * @throws IllegalArgumentException when the leader takes more than {@link #MAX_LEADER_BYTES} bytes of
     *                                  UTF-8 or has no exact UTF-8 encoding (a lone surrogate)
     */
    public Ballot {
        Objects.requireNonNull(leader, "leader");
        int bytes = SideFiles.utf8Exact(leader, "leader").length;
        if (bytes > MAX_LEADER_BYTES) {
            throw new IllegalArgumentException("leader takes " + bytes + " bytes of UTF-8, at most "
                    + MAX_LEADER_BYTES + " are allowed");
        }
    }

    /** The ballot that gives {@code generation} up. */
    public static Ballot givenUp(long generation) {
        return new Ballot(generation, "");
    }

    /** True when this ballot gives its generation up (names no leader). */
    public boolean isGivenUp() {
        return leader.isEmpty();
    }

    @Override
    public String toString() {
        return "Ballot[generation=" + Long.toUnsignedString(generation) + ", "
                + (isGivenUp() ? "given up" : "leader=" + leader) + "]";
    }
}
