package dev.felix.offload.retention;

import dev.felix.offload.copy.LargestTimestamps;
import dev.felix.offload.copy.LocalRelease;

import java.util.List;
import java.util.Objects;

/**
 * Why a segment past a retention limit stayed, and those above it with it: on local disk (local
 * retention) or in the store (total retention). Callers decide on the type; {@link #label()} is the
 * text an operator reads (the {@code retention} command's lines and its {@code local_blocked_by} and
 * {@code remote_blocked_by} fields) and is meant for nothing else.
 */
public sealed interface RetentionBlock {

    /** What an operator reads: one sentence naming the segment and why it stays. */
    String label();

    /** Local: a segment past {@value RetentionSettings#LOCAL_RETENTION_BYTES} that has no manifest entry yet. */
    record NotOffloaded(long segmentId) implements RetentionBlock {
        @Override
        public String label() {
            return "segment " + Long.toUnsignedString(segmentId) + " is past " + RetentionSettings.LOCAL_RETENTION_BYTES
                    + " but not offloaded yet";
        }
    }

    /**
     * Local: the local-release rule kept a segment past a limit ({@link LocalRelease.Decision.Keep}): its
     * entry is still settling, its local bytes differ from its entry, its copy is not proven, ...
     *
     * @param detail the rule's own words, which name the segment
     */
    record Kept(long segmentId, LocalRelease.KeptReason reason, String detail) implements RetentionBlock {
        public Kept {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }

        @Override
        public String label() {
            return detail;
        }
    }

    /**
     * Remote: whether an entry is past the time limit is not known, because its largest timestamp is
     * not known ({@value LargestTimestamps#FILE_NAME} has no line for it and rebuilding one failed).
     *
     * @param cause why rebuilding it failed
     */
    record TimestampUnknown(long segmentId, String cause) implements RetentionBlock {
        @Override
        public String label() {
            return "segment " + Long.toUnsignedString(segmentId) + ": its largest timestamp is not known ("
                    + LargestTimestamps.FILE_NAME + " has no line for it and rebuilding one failed: " + cause + ")";
        }
    }

    /** Remote: an entry past the total retention whose segment is still on local disk. */
    record StillLocal(long segmentId) implements RetentionBlock {
        @Override
        public String label() {
            return "segment " + Long.toUnsignedString(segmentId) + " is past the total retention but still on local disk";
        }
    }

    /**
     * Remote: entries past the total retention, kept because the manifest of a live shard could not be
     * read, so which objects it names is unknown.
     *
     * @param entries        how many entries are past the total retention
     * @param unreadableLive the live shards whose manifests could not be read
     */
    record LiveManifestUnreadable(int entries, List<String> unreadableLive) implements RetentionBlock {
        public LiveManifestUnreadable {
            unreadableLive = List.copyOf(unreadableLive);
        }

        @Override
        public String label() {
            return entries + " entries are past the total retention, but the manifest of live shard(s) " + unreadableLive
                    + " is unreadable, so no object is deleted until it is mended";
        }
    }
}
