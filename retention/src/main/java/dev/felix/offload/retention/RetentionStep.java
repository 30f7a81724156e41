package dev.felix.offload.retention;

/** Points in a retention pass where a {@link RetentionHook} is called: the seams of the crash tests. */
public enum RetentionStep {
    /** A local segment (and its index) was unlinked; the directory is not fsynced yet. */
    LOCAL_SEGMENT_REMOVED,
    /** The manifest without the expiring entries is durable; none of their objects is deleted yet. */
    MANIFEST_SAVED,
    /** One batch of an expired entry's objects was deleted. */
    OBJECT_BATCH_DELETED,
    /** Every object a deleted shard's manifest names was deleted; the manifest is still there. */
    DELETED_SHARD_OBJECTS_DELETED,
    /** A deleted shard's manifest was removed; its directory is still there. */
    DELETED_SHARD_MANIFEST_REMOVED,
    /** One batch of orphans was deleted. */
    ORPHAN_BATCH_DELETED
}
