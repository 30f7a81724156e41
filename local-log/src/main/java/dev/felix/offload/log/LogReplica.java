package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.side.Ballot;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.BallotOpening;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A {@link ShardLog}'s replication state: the accepted generation and its leader ({@code ballot},
 * then {@code replica}, both durable before a raise returns) and the commit offset, written behind
 * its advances by a {@link CommitWriter}. Both files are authoritative: one that does not decode
 * fails the open. The caller holds the log's write lock for every change.
 */
final class LogReplica {

    private final Path dir;
    private final String shard;
    private volatile ReplicaState state;
    private volatile Optional<String> leader;
    private final CommitWriter commitWriter;

    private LogReplica(Path dir, ReplicaState state, Optional<String> leader, boolean syncEachCommit) {
        this.dir = dir;
        this.shard = DataRoot.Shard.nameOf(dir);
        this.state = state;
        this.leader = leader;
        this.commitWriter = new CommitWriter(dir, state, () -> this.state, syncEachCommit);
    }

    /**
     * Loads the replica and ballot of {@code dir}, finishing a raise that crashed between the two
     * (the ballot written, the replica not yet), before anything else of the shard is written.
     */
    static LogReplica open(Path dir, boolean syncEachCommit) throws IOException, CorruptionException {
        ReplicaState replica = ReplicaFile.load(dir);
        Optional<Ballot> ballot = BallotFile.FILE.load(dir);
        BallotOpening opening = BallotOpening.decide(ballot, replica.generation());
        if (opening.raisesReplica()) {
            replica = replica.withGeneration(opening.generation());
            ReplicaFile.FILE.save(dir, replica);
        }
        return new LogReplica(dir, replica, opening.leader(), syncEachCommit);
    }

    /** The accepted generation and the commit offset as this log knows them (the file may lag). */
    ReplicaState state() {
        return state;
    }

    Optional<String> leader() {
        return leader;
    }

    /**
     * Refuses a {@code what} (truncation, reset) that would discard the record at {@code offset}
     * when it lies below the commit offset: a majority acknowledged it.
     */
    void refuseBelowCommit(String what, long offset) {
        long commit = state.commit();
        if (Long.compareUnsigned(offset, commit) < 0) {
            throw new BelowCommitException(shard, what, offset, commit);
        }
    }

    /** See {@link ShardLog#acceptGeneration}. */
    void accept(long generation, String newLeader) throws IOException {
        ReplicaState current = state;
        int cmp = Long.compareUnsigned(generation, current.generation());
        if (cmp < 0) {
            throw new IllegalArgumentException("generation " + Long.toUnsignedString(generation) + " is below the "
                    + "accepted generation " + Long.toUnsignedString(current.generation()));
        }
        if (cmp == 0) {
            if (leader.isPresent() && leader.get().equals(newLeader)) {
                return;
            }
            throw new IllegalArgumentException("generation " + Long.toUnsignedString(generation)
                    + " is already accepted" + leader.map(l -> " from leader " + l).orElse(" with no leader"));
        }
        // Held against the commit writer, which would otherwise write the old generation over the raise.
        synchronized (commitWriter.fileLock) {
            BallotFile.FILE.save(dir, new Ballot(generation, newLeader));
            ReplicaState raised = current.withGeneration(generation);
            ReplicaFile.FILE.save(dir, raised);
            state = raised;
            leader = Optional.of(newLeader);
            commitWriter.wroteItself(raised);
        }
    }

    /** Raises the commit offset in memory; answers whether it rose (then {@link #commitAdvanced} writes it). */
    boolean raiseCommit(long commit) {
        if (Long.compareUnsigned(commit, state.commit()) <= 0) {
            return false;
        }
        state = state.withCommit(commit);
        return true;
    }

    /** Schedules the write of a raised commit offset; called outside the log's write lock. */
    void commitAdvanced() {
        commitWriter.advanced();
    }

    /** Writes whatever commit offset is still behind. */
    void close() throws IOException {
        commitWriter.close();
    }
}
