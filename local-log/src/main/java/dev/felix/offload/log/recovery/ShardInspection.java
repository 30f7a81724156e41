package dev.felix.offload.log.recovery;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentScan;

import java.nio.file.Path;
import java.util.List;

/**
 * What recovery found in a shard directory and what it would do: a read-only plan. Nothing here
 * has touched a file.
 *
 * @param dir         the shard directory
 * @param segments    every segment in id order, with its scan and what recovery would do with it
 * @param problems    everything wrong, in segment order (a segment's data before its index)
 * @param verdict     the shard as a whole
 * @param records     valid records the shard holds after the repairs recovery may make (for a
 *                    corrupt shard: the valid records before each segment's damage)
 * @param firstOffset the first segment's base offset (0 when the log starts again empty, or when that
 *                    header cannot be read)
 * @param nextOffset  one past the last valid record of the last segment whose header can be read, or
 *                    that segment's base offset if it has none (0 when no header can be read)
 */
public record ShardInspection(Path dir, List<SegmentPlan> segments, List<Problem> problems, Verdict verdict,
                              long records, long firstOffset, long nextOffset) {

    /** The state of a shard as a whole. */
    public enum Verdict {
        /** Nothing wrong but, perhaps, indexes (which are rebuilt, never trusted). */
        OK("ok"),
        /** Damage that recovery repairs by itself under the options given. */
        REPAIRABLE("repairable"),
        /** Damage recovery must not repair: an operator has to look. */
        CORRUPT("corrupt");

        private final String label;

        Verdict(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** What recovery would do with one segment. */
    public enum Action {
        /** Nothing: the segment is whole. */
        KEEP,
        /** Cut the file at {@link SegmentScan#validEnd()}. */
        TRUNCATE_TAIL,
        /** Delete the file: a blank first segment. */
        DELETE_BLANK,
        /** Refuse: the damage is not repairable. */
        REFUSE
    }

    /**
     * One segment's scan and the action recovery would take.
     *
     * @param file   the segment's files
     * @param scan   the result of scanning it in full
     * @param action what recovery would do
     */
    public record SegmentPlan(SegmentFile file, SegmentScan scan, Action action) {
    }

    public String name() {
        return DataRoot.Shard.nameOf(dir);
    }
}
