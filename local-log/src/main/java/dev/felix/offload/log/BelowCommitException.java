package dev.felix.offload.log;

/**
 * A truncation or reset that would discard a record below the shard's commit offset: a record a
 * majority acknowledged. Refused; nothing was changed.
 */
public final class BelowCommitException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final long offset;
    private final long commit;

    BelowCommitException(String shard, String what, long offset, long commit) {
        super(shard + ": " + what + " at offset " + Long.toUnsignedString(offset)
                + " would discard records below the commit offset " + Long.toUnsignedString(commit) + "; refused");
        this.offset = offset;
        this.commit = commit;
    }

    public long offset() {
        return offset;
    }

    public long commit() {
        return commit;
    }
}
