package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static dev.felix.offload.log.SegmentBytes.concat;
import static dev.felix.offload.log.SegmentBytes.rawRecord;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A verified record header whose payload_len is over the 64 MiB limit (up to 2^29 - 1) raises
 * RecordTooLarge from the header alone, before anything is allocated for it: the file here ends right
 * after the header, and the bytes the scanning thread allocates are measured. (The same rule for every
 * length and kind, from the header bytes alone, is a property in RecordCodecPropertiesTest.)
 */
class RecordTooLargeTest {

    /** Far below the smallest over-limit length (64 MiB + 1), far above the scanner's own buffers. */
    private static final long ALLOCATION_BUDGET = 8L * 1024 * 1024;

    @TempDir
    Path tmp;

    private static com.sun.management.ThreadMXBean threads() {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(bean instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported(),
                "per-thread allocation counting is not available");
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) bean;
        t.setThreadAllocatedMemoryEnabled(true);
        return t;
    }

    @ParameterizedTest(name = "payload_len {0}, kind bits {1}, verify {2}")
    @CsvSource({
            "67108865,  0,          true",
            "67108865,  0,          false",
            "268435456, 0,          true",
            "536870911, 0,          true",
            "536870911, 0,          false",
            "536870911, -2147483648, true",
            "536870911, 1073741824, true",
            "536870911, 536870912,  true",
    })
    void overLimitLengthIsRecordTooLargeWithoutAllocating(int length, int kindBit, boolean verify) throws IOException {
        byte[] tag = kindBit == SegmentBytes.BIT_OPEN ? SegmentBytes.tag(1, 2, 3) : null;
        byte[] bytes = concat(SegmentHeader.v4(0, 1).encode(), rawRecord(kindBit | length, 0, 5, tag, new byte[0]));
        Path file = SegmentBytes.writeSegment(tmp.resolve("big_0-01"), 9, bytes);
        com.sun.management.ThreadMXBean threads = threads();
        long thread = Thread.currentThread().getId();

        try (SegmentScanner scanner = SegmentScanner.open(file, "big", 9, (verify ? ScanDepth.RECORDS : ScanDepth.HEADERS))) {
            long before = threads.getThreadAllocatedBytes(thread);
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> {
                        if (verify) {
                            scanner.nextRecord();
                        } else {
                            scanner.nextHeader();
                        }
                    });
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            assertThat(e).isNotNull();
            assertThat(e.kind()).as(e.getMessage()).isEqualTo(CorruptionKind.RECORD_TOO_LARGE);
            assertThat(e.site().position()).isEqualTo(32);
            assertThat(allocated).as("bytes allocated while rejecting the record").isLessThan(ALLOCATION_BUDGET);
            assertThat(scanner.position()).isEqualTo(32);
        } catch (CorruptionException e) {
            throw new AssertionError("the header is valid: " + e.getMessage(), e);
        }
    }

    @ParameterizedTest(name = "verify {0}")
    @CsvSource({"true", "false"})
    void lengthAtTheLimitInAShortFileIsTruncatedWithoutAllocatingEither(boolean verify) throws IOException {
        byte[] bytes = concat(SegmentHeader.v3(0, 1).encode(), rawRecord(RecordCodec.MAX_PAYLOAD_BYTES, 0, 5, null, new byte[0]));
        Path file = SegmentBytes.writeSegment(tmp.resolve("big_0-02"), 9, bytes);
        com.sun.management.ThreadMXBean threads = threads();
        long thread = Thread.currentThread().getId();
        try (SegmentScanner scanner = SegmentScanner.open(file, "big", 9, (verify ? ScanDepth.RECORDS : ScanDepth.HEADERS))) {
            long before = threads.getThreadAllocatedBytes(thread);
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> {
                        if (verify) {
                            scanner.nextRecord();
                        } else {
                            scanner.nextHeader();
                        }
                    });
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.needed()).isEqualTo(28L + RecordCodec.MAX_PAYLOAD_BYTES);
            assertThat(e.available()).isEqualTo(28);
            assertThat(allocated).isLessThan(ALLOCATION_BUDGET);
        } catch (CorruptionException e) {
            throw new AssertionError(e);
        }
    }
}
