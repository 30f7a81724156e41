package dev.felix.offload.log.recovery;

import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.SegmentHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RecoveryRules} against the spec's "What recovery may repair": a full table of
 * {@link RecoveryRules#isRepairableTail} (every kind × newest/older segment × repairChecksumTail
 * off/on) and {@link RecoveryRules#isBlankFirstSegment}, including its fatal counter-cases.
 */
class RecoveryRulesTest {

    private static final RecoveryOptions OPT_IN = new RecoveryOptions(true);

    /**
     * The expected table, one row per kind: repairable in the newest segment with default options,
     * and with repairChecksumTail. In an older segment nothing is ever repairable.
     */
    @ParameterizedTest(name = "{0}: newest default={1}, newest opt-in={2}, older=never")
    @CsvSource({
            "Truncated,             true,  true",
            "RecordHeaderChecksum,  false, true",
            "RecordChecksum,        false, true",
            "OffsetOutOfOrder,      false, true",
            "RecordTooLarge,        false, true",
            "RecordFlags,           false, false",
            "SegmentMagic,          false, false",
            "SegmentVersion,        false, false",
            "SegmentFlags,          false, false",
            "SegmentHeaderChecksum, false, false",
            "IndexMagic,            false, false",
            "IndexVersion,          false, false",
            "SideFileMagic,         false, false",
            "SideFileVersion,       false, false",
            "SideFileChecksum,      false, false",
            "SideFileContent,       false, false",
    })
    void isRepairableTailTable(String specName, boolean newestDefault, boolean newestOptIn) {
        CorruptionKind kind = bySpecName(specName);
        assertThat(RecoveryRules.isRepairableTail(kind, true, RecoveryOptions.DEFAULT)).as("newest, default")
                .isEqualTo(newestDefault);
        assertThat(RecoveryRules.isRepairableTail(kind, true, OPT_IN)).as("newest, repairChecksumTail")
                .isEqualTo(newestOptIn);
        assertThat(RecoveryRules.isRepairableTail(kind, false, RecoveryOptions.DEFAULT)).as("older, default").isFalse();
        assertThat(RecoveryRules.isRepairableTail(kind, false, OPT_IN)).as("older, repairChecksumTail").isFalse();
    }

    private static final Set<String> TABLE = Set.of("Truncated", "RecordHeaderChecksum", "RecordChecksum",
            "OffsetOutOfOrder", "RecordTooLarge", "RecordFlags", "SegmentMagic", "SegmentVersion", "SegmentFlags",
            "SegmentHeaderChecksum", "IndexMagic", "IndexVersion", "SideFileMagic", "SideFileVersion",
            "SideFileChecksum", "SideFileContent", "ObjectMismatch");

    @Test
    void tableCoversEveryCorruptionKind() {
        // A new kind must be added to the table above with a decision, not default silently.
        assertThat(Arrays.stream(CorruptionKind.values()).map(CorruptionKind::specName).collect(Collectors.toSet()))
                .isEqualTo(TABLE);
    }

    @Test
    void onlyTruncatedIsRepairableByDefaultAndOnlyInTheNewestSegment() {
        Set<CorruptionKind> repairable = EnumSet.noneOf(CorruptionKind.class);
        for (CorruptionKind kind : CorruptionKind.values()) {
            if (RecoveryRules.isRepairableTail(kind, true, RecoveryOptions.DEFAULT)) {
                repairable.add(kind);
            }
        }
        assertThat(repairable).containsExactly(CorruptionKind.TRUNCATED);
    }

    private static CorruptionKind bySpecName(String specName) {
        Map<String, CorruptionKind> byName = Arrays.stream(CorruptionKind.values())
                .collect(Collectors.toMap(CorruptionKind::specName, k -> k));
        assertThat(byName).containsKey(specName);
        return byName.get(specName);
    }

    // ---- blank first segment ----

    private static byte[] zeros(int n) {
        return new byte[n];
    }

    @Test
    void emptyOnlySegmentIsBlank() {
        assertThat(RecoveryRules.isBlankFirstSegment(1, 0, zeros(0))).isTrue();
    }

    @Test
    void onlySegmentShorterThanAHeaderIsBlankWhateverItHolds() {
        // Its header is missing: creation died before the 32 bytes were synced.
        byte[] partial = java.util.Arrays.copyOf(SegmentHeader.v3(0, 1).encode(), 20);
        assertThat(RecoveryRules.isBlankFirstSegment(1, 20, partial)).isTrue();
        assertThat(RecoveryRules.isBlankFirstSegment(1, 31, zeros(31))).isTrue();
        assertThat(RecoveryRules.isBlankFirstSegment(1, 1, new byte[] {(byte) 0xFF})).isTrue();
    }

    @Test
    void onlySegmentOfExactlyAZeroedHeaderIsBlank() {
        assertThat(RecoveryRules.isBlankFirstSegment(1, 32, zeros(32))).isTrue();
    }

    @Test
    void headerSizedOnlySegmentWithAnyNonZeroByteIsNotBlank() {
        for (int i = 0; i < 32; i++) {
            byte[] b = zeros(32);
            b[i] = 1;
            assertThat(RecoveryRules.isBlankFirstSegment(1, 32, b)).as("non-zero byte %d", i).isFalse();
        }
        assertThat(RecoveryRules.isBlankFirstSegment(1, 32, SegmentHeader.v3(0, 1).encode())).isFalse();
    }

    @Test
    void zeroedHeaderOnAFirstSegmentLongerThanAHeaderIsFatal() {
        // Fatal counter-case: a longer file had a durable header, so zeros there are damage.
        assertThat(RecoveryRules.isBlankFirstSegment(1, 33, zeros(33))).isFalse();
        assertThat(RecoveryRules.isBlankFirstSegment(1, 4096, zeros(4096))).isFalse();
        assertThat(RecoveryRules.isBlankFirstSegment(1, 33, zeros(0))).as("content not even read").isFalse();
    }

    @Test
    void moreThanOneSegmentIsNeverBlankFirst() {
        assertThat(RecoveryRules.isBlankFirstSegment(2, 0, zeros(0))).isFalse();
        assertThat(RecoveryRules.isBlankFirstSegment(2, 20, zeros(20))).isFalse();
        assertThat(RecoveryRules.isBlankFirstSegment(2, 32, zeros(32))).isFalse();
        assertThat(RecoveryRules.isBlankFirstSegment(5, 32, zeros(32))).isFalse();
    }
}
