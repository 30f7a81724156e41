package dev.felix.offload.store.remote;

import java.util.Locale;

/**
 * How a remote store uses CRC32 checksums with its server (setting {@code checksum}).
 *
 * <p>Many S3-compatible servers break on the AWS SDK's default of streaming every body with a
 * trailing checksum, so the stores never send trailers: they send a precomputed
 * {@code x-amz-checksum-crc32} header, or nothing.
 */
public enum ChecksumPolicy {
    /** Probe the server once: send CRC32 headers only if it accepts them, and read back stored CRC32s if it keeps them. */
    AUTO,
    /** Send checksums (CRC32 or Content-MD5) only where the S3 API requires one (batch delete); never ask for stored CRC32s. */
    WHEN_REQUIRED,
    /** Always send a CRC32 header with every upload (computing it when the caller gave none), and ask for stored CRC32s. */
    ALWAYS;

    /** Parses {@code auto}, {@code when-required} or {@code always}; the error names the setting. */
    public static ChecksumPolicy parse(String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        switch (v) {
            case "auto":
                return AUTO;
            case "when-required":
                return WHEN_REQUIRED;
            case "always":
                return ALWAYS;
            default:
                throw new IllegalArgumentException("setting 'checksum' must be auto, when-required or always, not '" + value + "'");
        }
    }

    public String settingValue() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
