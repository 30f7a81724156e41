package dev.felix.offload.log.side;

import java.util.Objects;
import java.util.Optional;

/**
 * What a shard's {@code ballot} means once read beside its {@code replica} file: the spec's open rule.
 *
 * <ul>
 *   <li>A ballot at the replica's generation names its leader: only that leader is answered at
 *       that generation (or none, when the ballot gave the generation up).</li>
 *   <li>A ballot one ahead of the replica's generation is a raise that crashed between writing the
 *       ballot and writing {@code replica}: its generation is taken, with its leader, and
 *       {@link #raisesReplica()} tells the caller to write {@code replica} at that generation.</li>
 *   <li>A ballot behind the replica's generation, or no ballot, names no leader.</li>
 * </ul>
 *
 * <p>The spec names "one ahead" only. A ballot further ahead is treated the same way: generations
 * may be raised by more than one at a time, the ballot is written first, and taking the higher
 * generation only ever refuses more leaders, never fewer.
 *
 * @param generation    the generation accepted once open: the replica's, or the ballot's when it is ahead
 * @param leader        the leader answered at that generation; empty when none is named or it was given up
 * @param givenUp       true when the ballot at that generation gave it up (no leader is answered at it)
 * @param raisesReplica true when the ballot was ahead: the caller writes {@code replica} at
 *                      {@link #generation()} (keeping its commit offset) before serving
 */
public record BallotOpening(long generation, Optional<String> leader, boolean givenUp, boolean raisesReplica) {

    public BallotOpening {
        Objects.requireNonNull(leader, "leader");
        if (givenUp && leader.isPresent()) {
            throw new IllegalArgumentException("a generation given up names no leader");
        }
    }

    /**
     * Applies the open rule.
     *
     * @param ballot            the ballot as loaded; empty when there is no file
     * @param replicaGeneration the generation of the shard's {@code replica} file (0 when there is none)
     */
    public static BallotOpening decide(Optional<Ballot> ballot, long replicaGeneration) {
        if (ballot.isEmpty()) {
            return new BallotOpening(replicaGeneration, Optional.empty(), false, false);
        }
        Ballot b = ballot.get();
        int order = Long.compareUnsigned(b.generation(), replicaGeneration);
        if (order < 0) {
            return new BallotOpening(replicaGeneration, Optional.empty(), false, false);
        }
        Optional<String> leader = b.isGivenUp() ? Optional.empty() : Optional.of(b.leader());
        return new BallotOpening(b.generation(), leader, b.isGivenUp(), order > 0);
    }
}
