package dev.felix.offload.log.format;

import java.util.Objects;

/**
 * The one exception for bytes that do not follow the format. It carries the {@link CorruptionKind},
 * the {@link CorruptionSite}, and for {@link CorruptionKind#TRUNCATED} the bytes needed and
 * available, for the checksum kinds the stored and computed CRC-32 values.
 *
 * <p>It is checked on purpose: every caller decides whether the damage is repairable, and that
 * decision is made in one place, {@code dev.felix.offload.log.recovery.RecoveryRules}.
 */
public final class CorruptionException extends Exception {

    private static final long serialVersionUID = 1L;

    private final CorruptionKind kind;
    private final CorruptionSite site;
    private final long needed;
    private final long available;
    private final long storedChecksum;
    private final long computedChecksum;
    private final String detail;

    private CorruptionException(CorruptionKind kind, CorruptionSite site, String detail,
                                long needed, long available, long stored, long computed) {
        super(kind.specName() + " at " + site + ": " + detail);
        this.kind = kind;
        this.detail = detail;
        this.site = Objects.requireNonNull(site, "site");
        this.needed = needed;
        this.available = available;
        this.storedChecksum = stored;
        this.computedChecksum = computed;
    }

    /** A kind that carries neither lengths nor checksums. */
    public static CorruptionException of(CorruptionKind kind, CorruptionSite site, String detail) {
        if (kind == CorruptionKind.TRUNCATED || kind.isChecksum()) {
            throw new IllegalArgumentException(kind + " needs its values; use truncated() or checksum()");
        }
        return new CorruptionException(kind, site, detail, -1, -1, -1, -1);
    }

    /** A short read: {@code needed} bytes were required from the site, {@code available} remain. */
    public static CorruptionException truncated(CorruptionSite site, String what, long needed, long available) {
        return new CorruptionException(CorruptionKind.TRUNCATED, site,
                what + " needs " + needed + " bytes, " + available + " available",
                needed, available, -1, -1);
    }

    /** A checksum mismatch, printing both values in hex. */
    public static CorruptionException checksum(CorruptionKind kind, CorruptionSite site, String what,
                                               int stored, int computed) {
        if (!kind.isChecksum()) {
            throw new IllegalArgumentException(kind + " is not a checksum kind");
        }
        return new CorruptionException(kind, site,
                what + " stored crc32 0x" + hex(stored) + ", computed 0x" + hex(computed),
                -1, -1, Integer.toUnsignedLong(stored), Integer.toUnsignedLong(computed));
    }

    private static String hex(int value) {
        return String.format("%08x", value);
    }

    /** What was wrong, without the kind and site that {@link #getMessage()} starts with. */
    public String detail() {
        return detail;
    }

    public CorruptionKind kind() {
        return kind;
    }

    public CorruptionSite site() {
        return site;
    }

    /** For {@link CorruptionKind#TRUNCATED}: the bytes required; otherwise -1. */
    public long needed() {
        return needed;
    }

    /** For {@link CorruptionKind#TRUNCATED}: the bytes the file still held; otherwise -1. */
    public long available() {
        return available;
    }

    /** For the checksum kinds: the CRC-32 stored in the file, unsigned; otherwise -1. */
    public long storedChecksum() {
        return storedChecksum;
    }

    /** For the checksum kinds: the CRC-32 computed over the bytes, unsigned; otherwise -1. */
    public long computedChecksum() {
        return computedChecksum;
    }
}
