package dev.felix.offload.store.remote;

import dev.felix.offload.store.PutOptions;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.zip.CRC32;

/**
 * How a remote store proves a multipart object's whole CRC32 without reading the object back.
 *
 * <p>A multipart upload sends each part with its own CRC32. A server that keeps checksums keeps
 * only a composite for the object ({@code xxxx==-N}: the CRC32 of the N part CRC32s), which is not
 * the object's CRC32. So the store records the part size and the part CRC32s it sends as one user
 * metadata entry on the object ({@link #METADATA_NAME}, set when the upload is created), and
 * {@code head} answers a whole-object CRC32 only when the server's composite equals the CRC32 of
 * those recorded part CRC32s, the part count and the object's size agree with them, and the server
 * was seen by the probe to refuse a wrong CRC32 (so the part CRC32s it combined are of the bytes
 * it received, not just echoes of the headers). The whole-object value is then the recorded part
 * CRC32s combined ({@link Crc32Combine}). The recorded values are only the client's claim; the
 * composite is the server's word on the bytes it holds, and the claim is used only where the two
 * agree (a random disagreement goes unnoticed with odds of 2^-32, the same as CRC32's own). A part
 * damaged on its way in a manner its part CRC32 could not see therefore makes head report no CRC32,
 * and the caller falls back to reading the object.
 *
 * <p>Why not the other way AWS offers since 2024: creating the upload with checksum type
 * {@code FULL_OBJECT}, so the server itself keeps the whole object's CRC32. It is the cleaner
 * answer on AWS S3, but S3Mock 4.11.0 accepts the header and still completes a composite (and
 * refuses any whole-object CRC32 sent on completion), and S3Proxy 2.7.0 keeps no checksums at all,
 * so it would have proved nothing on either server this project tests against. The composite
 * is what S3Mock and AWS S3 both keep, and checking it needs no request beyond the HEAD that
 * verification makes anyway.
 */
public final class PartCrc32s {
    /** The user metadata name the record is kept under; callers may not use it (a reserved name, see {@link PutOptions}). */
    public static final String METADATA_NAME = PutOptions.RESERVED_METADATA_PREFIX + "part-crc32s";

    /**
     * The most parts recorded: 4 bytes each, base64-encoded, 128 parts take 684 characters of the 2 KiB
     * AWS allows for all user metadata. Objects of more parts (above 2 GiB in 16 MiB parts) go unrecorded
     * and are verified by reading them.
     */
    static final int MAX_RECORDED_PARTS = 128;

    private PartCrc32s() {}

    /** The metadata value recording these parts, empty when there are too many to record. */
    public static Optional<String> record(long partSize, long[] partCrcs) {
        if (partCrcs.length == 0 || partCrcs.length > MAX_RECORDED_PARTS) {
            return Optional.empty();
        }
        return Optional.of(partSize + ":" + Base64.getEncoder().encodeToString(bytes(partCrcs)));
    }

    /** The CRC32 of the whole body, from the CRC32s of its parts of {@code partSize} bytes (the last may be shorter). */
    public static long wholeCrc32(long[] partCrcs, long partSize, long totalLength) {
        long crc = 0; // the CRC32 of nothing
        long done = 0;
        for (long partCrc : partCrcs) {
            long length = Math.min(partSize, totalLength - done);
            crc = Crc32Combine.combine(crc, partCrc, length);
            done += length;
        }
        return crc;
    }

    /**
     * The whole object's CRC32 as the server vouches for it.
     *
     * @param serverChecksum the {@code x-amz-checksum-crc32} the server answered (null if none)
     * @param metadata the object's user metadata
     * @param objectSize the object's size as the server answered it
     * @param serverChecksCrc32 the server was seen to refuse a wrong CRC32; composites of other servers are not trusted
     * @return a plain CRC32 as answered; for a composite, the recorded parts' whole CRC32 when everything
     *     agrees; else empty
     */
    public static OptionalLong storedCrc32(String serverChecksum, Map<String, String> metadata, long objectSize,
            boolean serverChecksCrc32) {
        OptionalLong plain = Crc32Text.fromBase64(serverChecksum);
        if (plain.isPresent()) {
            return plain;
        }
        Optional<Crc32Text.Composite> composite = Crc32Text.compositeFromBase64(serverChecksum);
        String recorded = recordIn(metadata);
        if (!serverChecksCrc32 || composite.isEmpty() || recorded == null) {
            return OptionalLong.empty();
        }
        int colon = recorded.indexOf(':');
        long partSize;
        long[] partCrcs;
        try {
            partSize = Long.parseLong(recorded.substring(0, Math.max(colon, 0)));
            byte[] raw = Base64.getDecoder().decode(recorded.substring(colon + 1));
            if (raw.length == 0 || raw.length % 4 != 0) {
                return OptionalLong.empty();
            }
            ByteBuffer buffer = ByteBuffer.wrap(raw);
            partCrcs = new long[raw.length / 4];
            for (int i = 0; i < partCrcs.length; i++) {
                partCrcs[i] = buffer.getInt() & 0xFFFF_FFFFL;
            }
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return OptionalLong.empty();
        }
        int parts = partCrcs.length;
        if (partSize <= 0 || composite.get().parts() != parts
                || objectSize <= (parts - 1) * partSize || objectSize > parts * partSize) {
            return OptionalLong.empty();
        }
        CRC32 ofPartCrcs = new CRC32();
        ofPartCrcs.update(bytes(partCrcs));
        if (ofPartCrcs.getValue() != composite.get().crc32OfPartCrcs()) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(wholeCrc32(partCrcs, partSize, objectSize));
    }

    /** {@code metadata} without the record, as callers of head see it. */
    public static Map<String, String> withoutRecord(Map<String, String> metadata) {
        Map<String, String> out = new LinkedHashMap<>();
        metadata.forEach((name, value) -> {
            if (!METADATA_NAME.equals(name.toLowerCase(Locale.ROOT))) {
                out.put(name, value);
            }
        });
        return out;
    }

    private static String recordIn(Map<String, String> metadata) {
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (METADATA_NAME.equals(e.getKey().toLowerCase(Locale.ROOT))) {
                return e.getValue();
            }
        }
        return null;
    }

    private static byte[] bytes(long[] crcs) {
        ByteBuffer buffer = ByteBuffer.allocate(crcs.length * 4);
        for (long crc : crcs) {
            buffer.putInt((int) crc);
        }
        return buffer.array();
    }
}
