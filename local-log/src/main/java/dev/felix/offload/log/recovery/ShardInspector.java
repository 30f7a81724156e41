package dev.felix.offload.log.recovery;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.log.recovery.ShardInspection.Action;
import dev.felix.offload.log.recovery.ShardInspection.SegmentPlan;
import dev.felix.offload.log.recovery.ShardInspection.Verdict;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.DerivedLoad;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.KeyIndexFile;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.ReplicaFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place where corruption in a shard directory is caught and judged. It scans segments
 * (record checksums verified, or for sealed segments at {@link Depth#NEWEST_SEGMENT} only their
 * headers), checks that consecutive segments are contiguous, checks each index, and applies
 * {@link RecoveryRules} to decide what recovery would do. It only reads.
 */
public final class ShardInspector {

    /** Position reported for a non-contiguous segment: its header's base_offset field. */
    static final long BASE_OFFSET_POSITION = SegmentHeader.BASE_OFFSET_OFFSET;

    private ShardInspector() {
    }

    /** How much of a shard is read. */
    public enum Depth {
        /** Every record of every segment, checksums verified: fsck. */
        EVERY_SEGMENT,
        /**
         * Every record of the newest segment, checksums verified, and only record headers of the
         * sealed ones: what an open needs. Sealed segments were verified when written and are
         * verified again by every read; their headers still prove the offsets and the lengths.
         */
        NEWEST_SEGMENT
    }

    /** Inspects every record of {@code shardDir}; I/O errors (not corruption) propagate. */
    public static ShardInspection inspect(Path shardDir, RecoveryOptions options) throws IOException {
        return inspect(shardDir, options, Depth.EVERY_SEGMENT);
    }

    /** Inspects {@code shardDir} to the given depth, naming it as the data root does; I/O errors propagate. */
    public static ShardInspection inspect(Path shardDir, RecoveryOptions options, Depth depth) throws IOException {
        return inspect(DataRoot.Shard.nameOf(shardDir), shardDir, options, depth);
    }

    /**
     * Inspects shard {@code shard} (its name under the data root, as {@code DataRoot} gives it:
     * {@code groups/<dir>} for one under {@code groups/}) in {@code shardDir}; every problem names it
     * so. I/O errors (not corruption) propagate.
     */
    public static ShardInspection inspect(String shard, Path shardDir, RecoveryOptions options, Depth depth)
            throws IOException {
        List<SegmentFile> files = SegmentFile.list(shardDir);
        List<SegmentPlan> plans = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        long records = 0;
        long firstOffset = 0;
        long nextOffset = 0;
        // Contiguity is only checked against a segment whose header (and so whose end) is known.
        boolean previousKnown = false;
        String previousName = null;
        boolean fatal = false;
        boolean repaired = false;

        for (int i = 0; i < files.size(); i++) {
            SegmentFile file = files.get(i);
            boolean newest = i == files.size() - 1;
            SegmentScan scan = SegmentScan.of(file.log(), shard, file.id(), (newest || depth == Depth.EVERY_SEGMENT ? ScanDepth.RECORDS : ScanDepth.HEADERS));
            Action action = Action.KEEP;
            CorruptionException failure = scan.failure();

            if (!scan.headerValid()) {
                if (RecoveryRules.isBlankFirstSegment(files.size(), scan.fileSize(), headBytes(file.log(), scan.fileSize()))) {
                    action = Action.DELETE_BLANK;
                    problems.add(dataProblem(file, failure, true, "blank first segment: its creation failed before it "
                            + "could hold a record; recovery deletes it and the log starts again empty"));
                } else {
                    action = Action.REFUSE;
                    problems.add(dataProblem(file, failure, false, failure.detail()));
                }
                plans.add(new SegmentPlan(file, scan, action));
                previousKnown = false;
                continue;
            }

            if (previousKnown && scan.baseOffset() != nextOffset) {
                CorruptionException gap = CorruptionException.of(CorruptionKind.OFFSET_OUT_OF_ORDER,
                        new CorruptionSite(shard, file.id(), BASE_OFFSET_POSITION), "segment base offset "
                                + Long.toUnsignedString(scan.baseOffset()) + ", but the previous segment " + previousName
                                + " ends before offset " + Long.toUnsignedString(nextOffset)
                                + "; consecutive segments must be contiguous");
                problems.add(dataProblem(file, gap, false, gap.detail()));
                fatal = true;
            }
            if (i == 0) {
                firstOffset = scan.baseOffset();
            }

            if (failure != null) {
                boolean repairable = RecoveryRules.isRepairableTail(failure.kind(), newest, options);
                action = repairable ? Action.TRUNCATE_TAIL : Action.REFUSE;
                String message = failure.detail() + (repairable
                        ? "; recovery truncates the segment to " + scan.validEnd() + " bytes, dropping "
                                + scan.bytesAfterValid() + " bytes"
                        : "");
                problems.add(dataProblem(file, failure, repairable, message));
            }
            records += scan.recordCount();
            nextOffset = scan.nextOffset();
            previousKnown = true;
            previousName = file.logName();
            checkIndex(shard, file, scan, problems);
            plans.add(new SegmentPlan(file, scan, action));
        }

        fatal |= checkSideFiles(shardDir, shard, firstOffset, nextOffset, problems);
        for (SegmentPlan plan : plans) {
            fatal |= plan.action() == Action.REFUSE;
            repaired |= plan.action() == Action.TRUNCATE_TAIL || plan.action() == Action.DELETE_BLANK;
        }
        Verdict verdict = fatal ? Verdict.CORRUPT : repaired ? Verdict.REPAIRABLE : Verdict.OK;
        return new ShardInspection(shardDir, List.copyOf(plans), List.copyOf(problems), verdict, records,
                firstOffset, nextOffset);
    }

    /**
     * The shard's other files. {@code replica} and {@code ballot} are authoritative: one that does not
     * decode makes the shard corrupt. {@code epochs}, {@code producers} and {@code keys.idx} are
     * derived: a damaged or stale one is a repairable problem (it is ignored and rebuilt) and leaves the
     * verdict alone. Answers whether anything authoritative is damaged.
     */
    private static boolean checkSideFiles(Path dir, String shard, long first, long next, List<Problem> problems)
            throws IOException {
        boolean fatal = false;
        try {
            ReplicaFile.load(dir);
        } catch (CorruptionException e) {
            problems.add(sideProblem(ReplicaFile.FILE_NAME, e, false, e.detail() + "; the replica file is "
                    + "authoritative and nothing can rebuild it"));
            fatal = true;
        }
        try {
            BallotFile.FILE.load(dir);
        } catch (CorruptionException e) {
            problems.add(sideProblem(BallotFile.FILE_NAME, e, false, e.detail() + "; the ballot is authoritative"));
            fatal = true;
        }
        derived(EpochsFile.FILE_NAME, EpochsFile.FILE.loadDerived(dir), problems);
        derived(ProducersFile.FILE_NAME, ProducersFile.load(dir, first, next), problems);
        derived(KeyIndexFile.FILE_NAME, KeyIndexFile.FILE.loadDerived(dir), problems);
        return fatal;
    }

    private static void derived(String file, DerivedLoad<?> load, List<Problem> problems) {
        load.problem().ifPresent(e -> problems.add(sideProblem(file, e, true, e.detail()
                + "; derived, so it is ignored and rebuilt from the log")));
    }

    private static Problem sideProblem(String file, CorruptionException e, boolean derived, String message) {
        return new Problem(file, e.kind().specName(), CorruptionSite.UNKNOWN_SEGMENT, e.site().position(), derived,
                derived, message, e);
    }

    private static byte[] headBytes(Path log, long size) throws IOException {
        return size <= SegmentHeader.LENGTH ? Files.readAllBytes(log) : new byte[0];
    }

    private static Problem dataProblem(SegmentFile file, CorruptionException e, boolean repairable, String message) {
        return new Problem(file.logName(), e.kind().specName(), file.id(), e.site().position(), repairable, false,
                message, e);
    }

    /** Indexes are derived: every failure here is repairable by a rebuild and leaves the verdict alone. */
    private static void checkIndex(String shard, SegmentFile file, SegmentScan scan, List<Problem> problems)
            throws IOException {
        String name = file.indexName();
        try {
            SegmentIndex index = SegmentIndex.read(file.index(), shard, file.id());
            if (index.baseOffset() != scan.baseOffset()) {
                problems.add(new Problem(name, "IndexBaseOffset", file.id(), SegmentIndex.BASE_OFFSET_OFFSET, true, true,
                        "index base offset " + index.baseOffset() + ", segment base offset " + scan.baseOffset()
                                + "; rebuilt from the segment", null));
            }
        } catch (NoSuchFileException e) {
            problems.add(new Problem(name, "IndexMissing", file.id(), 0, true, true,
                    "index file is missing; rebuilt from the segment", null));
        } catch (CorruptionException e) {
            problems.add(new Problem(name, e.kind().specName(), file.id(), e.site().position(), true, true,
                    e.detail() + "; rebuilt from the segment", e));
        }
    }
}
