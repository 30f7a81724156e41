package dev.felix.offload.retention;

/**
 * What one retention pass did to one shard.
 *
 * @param shard    the shard directory's name
 * @param settings the settings it was held to
 * @param local    local retention's part
 * @param remote   remote retention's part
 * @param failure  what went wrong (an unreadable manifest, an I/O or store error), or null
 */
public record ShardRetentionResult(String shard, RetentionSettings settings, LocalRetentionResult local,
                                   RemoteRetentionResult remote, String failure) {

    public boolean failed() {
        return failure != null;
    }
}
