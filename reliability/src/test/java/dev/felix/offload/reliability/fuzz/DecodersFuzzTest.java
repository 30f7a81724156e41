package dev.felix.offload.reliability.fuzz;

import dev.felix.offload.log.format.ScanDepth;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.KeyIndexFile;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.RegistrationFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.RunStateFile;
import dev.felix.offload.log.side.StorageIdFile;
import dev.felix.offload.log.side.StreamMarkerFile;
import dev.felix.offload.manifest.ManifestCodec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * Every decoder of bytes that come from disk or from a store, fed fuzzed bytes: the segment scanner
 * (over a temporary file, as recovery, fsck and offload read segments), the sparse index loader,
 * the offload manifest, and each side-file codec of {@code log/side}. The only allowed outcomes are
 * a value or a {@link CorruptionException}; anything else thrown (an unchecked exception, an
 * OutOfMemoryError from a length believed too early, a stack overflow) is a finding.
 *
 * <p>Where a value comes back, more must hold: it encodes, the encoding decodes again, and encoding
 * that gives the same bytes (a value the decoder accepts is one the writer can write back). For
 * segments, the scan's own claims are checked against the bytes: the CRC-32 of the valid bytes, the
 * offsets' contiguity, and that a header-only scan never stops before a verifying one.
 *
 * <p>Under plain JUnit (README's test command) each method runs its committed inputs from
 * {@code src/test/resources/dev/felix/offload/reliability/fuzz/DecodersFuzzTestInputs/<method>/}
 * (Jazzer's regression mode); {@code docs/fuzzing.md} says how to fuzz for longer.
 */
class DecodersFuzzTest {

    private static final CorruptionSite SITE = CorruptionSite.inFile("fuzz", "fuzzed", 0);
    private static final Path SEGMENT = temporaryFile();

    private static Path temporaryFile() {
        try {
            Path f = Files.createTempFile("fuzzed-segment", ".log");
            f.toFile().deleteOnExit();
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A decoder under test. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException;
    }

    /** Its encoder. */
    @FunctionalInterface
    interface Encoder<T> {
        byte[] encode(T value);
    }

    /** A value or a CorruptionException; a value must survive encode, decode, encode unchanged. */
    static <T> void valueOrCorruption(byte[] data, Decoder<T> decoder, Encoder<T> encoder) {
        T value;
        try {
            value = decoder.decode(ByteBuffer.wrap(data), SITE);
        } catch (CorruptionException expected) {
            return;
        }
        if (value == null) {
            throw new AssertionError("the decoder answered null");
        }
        byte[] once = encoder.encode(value);
        T again;
        try {
            again = decoder.decode(ByteBuffer.wrap(once), SITE);
        } catch (CorruptionException e) {
            throw new AssertionError("the encoding of a decoded value does not decode: " + e.getMessage(), e);
        }
        byte[] twice = encoder.encode(again);
        if (!Arrays.equals(once, twice)) {
            throw new AssertionError("encode(decode(encode(v))) differs from encode(v) for " + value);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void segmentScanner(byte[] data) throws IOException {
        scan(data);
    }

    @FuzzTest(maxDuration = "5m")
    void segmentScannerWithValidChecksums(byte[] data) throws IOException {
        scan(Checksums.segment(data));
    }

    private static void scan(byte[] data) throws IOException {
        Files.write(SEGMENT, data);
        SegmentScan verified = SegmentScan.of(SEGMENT, "fuzz", 0, ScanDepth.RECORDS);
        SegmentScan headers = SegmentScan.of(SEGMENT, "fuzz", 0, ScanDepth.HEADERS);
        if (verified.fileSize() != data.length || verified.validEnd() > data.length) {
            throw new AssertionError("scan of " + data.length + " bytes claims size " + verified.fileSize()
                    + ", valid end " + verified.validEnd());
        }
        if (verified.headerValid()) {
            CRC32 crc = new CRC32();
            crc.update(data, 0, (int) verified.validEnd());
            if (crc.getValue() != verified.validBytesCrc32()) {
                throw new AssertionError("the CRC-32 of the valid bytes is wrong");
            }
            if (verified.nextOffset() - verified.baseOffset() != verified.recordCount()) {
                throw new AssertionError("offsets are not contiguous: " + verified);
            }
            if (verified.isClean() && verified.validEnd() != data.length) {
                throw new AssertionError("a clean scan that stops before the end: " + verified);
            }
            if (headers.recordCount() < verified.recordCount() || headers.validEnd() < verified.validEnd()) {
                throw new AssertionError("a header-only scan stopped before a verifying one: " + headers + " vs "
                        + verified);
            }
        } else if (verified.isClean()) {
            throw new AssertionError("no header and no failure");
        }
        // The scanner itself, record by record, as readers use it.
        try (SegmentScanner scanner = SegmentScanner.open(SEGMENT, "fuzz", 0, ScanDepth.RECORDS)) {
            long n = 0;
            Record r;
            while ((r = scanner.nextRecord()) != null) {
                if (++n > data.length) {
                    throw new AssertionError("more records than bytes");
                }
                if (r.offset() != scanner.nextOffset() - 1) {
                    throw new AssertionError("record offset " + r.offset() + " but next is " + scanner.nextOffset());
                }
            }
        } catch (CorruptionException expected) {
            // damage ends a scan
        }
    }

    @FuzzTest(maxDuration = "5m")
    void segmentIndex(byte[] data) {
        valueOrCorruption(data, SegmentIndex::decode, SegmentIndex::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void manifest(byte[] data) {
        valueOrCorruption(data, ManifestCodec::decode, ManifestCodec::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void manifestWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.trailingCrc32(data), ManifestCodec::decode, ManifestCodec::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void ballot(byte[] data) {
        valueOrCorruption(data, BallotFile::decode, BallotFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void ballotWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.ballot(data), BallotFile::decode, BallotFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void epochs(byte[] data) {
        valueOrCorruption(data, EpochsFile::decode, EpochsFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void epochsWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.epochs(data), EpochsFile::decode, EpochsFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void keyIndex(byte[] data) {
        valueOrCorruption(data, KeyIndexFile::decode, KeyIndexFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void keyIndexWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.trailingCrc32c(data), KeyIndexFile::decode, KeyIndexFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void producers(byte[] data) {
        valueOrCorruption(data, ProducersFile::decode, ProducersFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void producersWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.producers(data), ProducersFile::decode, ProducersFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void registration(byte[] data) {
        valueOrCorruption(data, RegistrationFile::decode, RegistrationFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void registrationWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.registration(data), RegistrationFile::decode, RegistrationFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void replica(byte[] data) {
        valueOrCorruption(data, ReplicaFile::decode, ReplicaFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void replicaWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.replica(data), ReplicaFile::decode, ReplicaFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void runState(byte[] data) {
        valueOrCorruption(data, RunStateFile::decode, RunStateFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void runStateWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.runState(data), RunStateFile::decode, RunStateFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void storageId(byte[] data) {
        valueOrCorruption(data, StorageIdFile::decode, StorageIdFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void storageIdWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.storageId(data), StorageIdFile::decode, StorageIdFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void streamMarker(byte[] data) {
        valueOrCorruption(data, StreamMarkerFile::decode, StreamMarkerFile::encode);
    }

    @FuzzTest(maxDuration = "5m")
    void streamMarkerWithValidChecksum(byte[] data) {
        valueOrCorruption(Checksums.streamMarker(data), StreamMarkerFile::decode, StreamMarkerFile::encode);
    }
}
