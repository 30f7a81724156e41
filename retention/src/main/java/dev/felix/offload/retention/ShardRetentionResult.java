package dev.felix.offload.retention;

import java.util.List;

/**
 * What one retention pass did to one shard.
 *
 * @param shard    the shard directory's name
 * @param settings the settings it was held to
 * @param local    local retention's part
 * @param remote   remote retention's part
 * @param failure  what went wrong (an unreadable manifest, an I/O or store error), or null
 * @param problems what the pass met that an operator must look at (damaged or mismatched local
 *                 segments, timestamps ahead of the clock); each fails the pass like a failure
 */
public record ShardRetentionResult(String shard, RetentionSettings settings, LocalRetentionResult local,
                                   RemoteRetentionResult remote, String failure, List<RetentionProblem> problems) {

    public ShardRetentionResult {
        problems = List.copyOf(problems);
    }

    public ShardRetentionResult(String shard, RetentionSettings settings, LocalRetentionResult local,
                                RemoteRetentionResult remote, String failure) {
        this(shard, settings, local, remote, failure, List.of());
    }

    public boolean failed() {
        return failure != null;
    }
}
