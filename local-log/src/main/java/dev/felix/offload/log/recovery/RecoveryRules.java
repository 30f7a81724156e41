package dev.felix.offload.log.recovery;

import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.SegmentHeader;

/**
 * Which damage recovery may repair, exactly as the spec's "What recovery may repair" says. Only the
 * end of the newest segment can hold a record that was mid-write when the process died, so only
 * there is anything cut:
 * <ul>
 *   <li>{@code Truncated} in the newest segment's records: always repairable. The header verified,
 *       so the length is the one the writer meant, and a file ending short of it is provably an
 *       unfinished write that nothing acknowledged.</li>
 *   <li>{@code RecordHeaderChecksum}, {@code RecordChecksum}, {@code OffsetOutOfOrder},
 *       {@code RecordTooLarge} in the newest segment's records: only with
 *       {@link RecoveryOptions#repairChecksumTail()}; the record may be acknowledged and rotted.</li>
 *   <li>{@code RecordFlags}, anything in an older segment, and any segment-header damage: never,
 *       except a blank first segment ({@link #isBlankFirstSegment}).</li>
 * </ul>
 * The line is whether the length can be trusted: when it can, recovery can prove the write was
 * unfinished; when it cannot, recovery refuses to guess.
 */
public final class RecoveryRules {

    private RecoveryRules() {
    }

    /**
     * Whether damage of {@code kind} found among a segment's records (the header having verified)
     * may be repaired by truncating the segment at the damaged record.
     */
    public static boolean isRepairableTail(CorruptionKind kind, boolean newestSegment, RecoveryOptions options) {
        if (!newestSegment) {
            return false;
        }
        return switch (kind) {
            case TRUNCATED -> true;
            case RECORD_HEADER_CHECKSUM, RECORD_CHECKSUM, OFFSET_OUT_OF_ORDER, RECORD_TOO_LARGE ->
                    options.repairChecksumTail();
            default -> false;
        };
    }

    /**
     * The one repairable case of segment-header damage: the shard's only segment is no longer than a
     * header, and its header is missing (the file is shorter than a header) or all zeros. Its
     * creation failed before it could hold a record, and since creation syncs the header before any
     * append, no record can have been acknowledged in it. Recovery deletes it and the log starts
     * again empty.
     *
     * <p>A first segment longer than a header had a durable header, so a zeroed header there is
     * damage to acknowledged records and stays fatal, even when every byte after it is zero.
     * (The broker also requires its durable mark to vouch for nothing past the header; this service
     * runs beside the broker and has no mark, so a file too short to hold a record is the proof.)
     *
     * @param segmentCount how many segments the shard has
     * @param content      the whole file; only looked at when it is no longer than a header
     */
    public static boolean isBlankFirstSegment(int segmentCount, long fileSize, byte[] content) {
        if (segmentCount != 1 || fileSize > SegmentHeader.LENGTH) {
            return false;
        }
        if (fileSize < SegmentHeader.LENGTH) {
            return true;
        }
        for (byte b : content) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
