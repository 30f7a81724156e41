package dev.felix.offload.log.side;

/**
 * What a shard's {@code replica} file says: the highest leadership generation this broker accepted a
 * leader of the shard at, and the commit offset it knows (one past the last record a majority
 * acknowledged). Both are unsigned 64-bit values.
 *
 * @param generation the highest generation accepted
 * @param commit     one past the last record known committed
 */
public record ReplicaState(long generation, long commit) {

    /** What an absent file means: nothing accepted, nothing known committed. */
    public static final ReplicaState NONE = new ReplicaState(0, 0);

    /** The same commit offset at another generation. */
    public ReplicaState withGeneration(long newGeneration) {
        return new ReplicaState(newGeneration, commit);
    }

    /** The same generation with another commit offset. */
    public ReplicaState withCommit(long newCommit) {
        return new ReplicaState(generation, newCommit);
    }

    @Override
    public String toString() {
        return "ReplicaState[generation=" + Long.toUnsignedString(generation) + ", commit="
                + Long.toUnsignedString(commit) + "]";
    }
}
