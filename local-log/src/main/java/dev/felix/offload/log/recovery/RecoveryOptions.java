package dev.felix.offload.log.recovery;

/**
 * What an operator allows recovery to repair beyond the always-safe cases.
 *
 * @param repairChecksumTail also truncate a newest segment's tail at RecordHeaderChecksum,
 *                           RecordChecksum, OffsetOutOfOrder or RecordTooLarge damage. Off by default:
 *                           such damage may be rot in an acknowledged record rather than a torn write.
 */
public record RecoveryOptions(boolean repairChecksumTail) {

    /** Only the repairs that can never drop an acknowledged record. */
    public static final RecoveryOptions DEFAULT = new RecoveryOptions(false);
}
