package dev.felix.offload.copy;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The one rule by which a sealed local segment may be unlinked in favour of its copy in the store,
 * and the one place that unlinks it. The offload pass (as local retention lets segments go) and
 * retention (past a local limit) both ask {@link #decide} and then call {@link #release}.
 *
 * <p>A segment goes only when every one of these holds:
 * <ol>
 *   <li>the shard's manifest has its entry (same segment id and base offset);</li>
 *   <li>its valid bytes are exactly the entry's (size and CRC32, every record checked); or it is
 *       damaged and its copy re-verifies against the entry now, the copy proven at upload being the
 *       good one;</li>
 *   <li>its copy is proven: by the proof written when it was recorded ({@link CopyProofs}), or proven
 *       now ({@link CopyProver}) where this caller may prove (not a pass under {@code --verify none});</li>
 *   <li>the entry has stood for the settle time ({@link #DEFAULT_SETTLE}) since that proof was
 *       written, which is after the entry became durable;</li>
 *   <li>{@link #release} then reads the manifest on disk again and finds exactly what was read (and
 *       so the entry) before it unlinks.</li>
 * </ol>
 * Why the settle time: the broker rewrites {@code offload.manifest} itself (a truncation or reset:
 * read, write a temporary, fsync, rename) and its rename does not compare. A rewrite that read the
 * file before our entry was saved and renames after it erases the entry. If the segment were unlinked
 * in between, its records would be in the store only, named by nothing. A rewrite that takes less
 * than the settle time has renamed before {@link #release} reads the manifest again, so the entry's
 * absence is seen and the segment stays (the next pass records it again). The broker's rewrite must
 * therefore take less than the settle time (docs/reliability.md); a longer one can still erase an
 * entry, and then the object is kept by {@link ObjectRelease} as unrecorded history, never swept.
 */
public final class LocalRelease {

    private static final Logger LOG = LoggerFactory.getLogger(LocalRelease.class);

    /** How long an entry stands before its local segment may go, unless configured otherwise. */
    public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(5);

    /** Something an operator must see about a segment, whatever was decided. */
    public record Finding(FindingKind kind, long segment, long byteAt, String detail) {
    }

    /** What a finding is. */
    public enum FindingKind {
        /** The local segment fails its checks while its entry stands. */
        LOCAL_DAMAGED,
        /** The local segment scans clean but is not its copy's bytes. */
        LOCAL_MISMATCH,
        /** The copy, checked before the local file could go, is not the entry's bytes. */
        COPY_UNPROVEN
    }

    /** What {@link #decide} says. */
    public sealed interface Decision {
        /** A finding to report, or null. */
        Finding finding();

        /** The segment may go; {@code how} its copy is proven. */
        record Release(String how, Finding finding) implements Decision {
        }

        /**
         * The segment stays.
         *
         * @param until for {@link KeptReason#SETTLING}, when the entry will have stood long enough
         */
        record Keep(KeptReason reason, String detail, Instant until, Finding finding) implements Decision {
            public Keep {
                Objects.requireNonNull(reason, "reason");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }

    /** Why a segment stays. */
    public enum KeptReason {
        NO_ENTRY("no-entry"),
        DIFFERS_FROM_ENTRY("differs-from-entry"),
        LOCAL_DAMAGED("local-damaged"),
        COPY_UNPROVEN("copy-unproven"),
        COPY_NOT_PROVABLE("copy-not-provable"),
        RECORDED_WITHOUT_PROOF("recorded-without-proof"),
        SETTLING("settling"),
        GONE("gone");

        private final String label;

        KeptReason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private final String shard;
    private final ObjectStore store;
    private final CopyProofs proofs;
    private final boolean proveNow;
    private final Duration settle;
    private final Clock clock;

    /**
     * @param store    where copies are proven now, or null when this caller cannot read the store
     * @param proofs   the shard's proofs, read for this pass
     * @param proveNow false for a pass under {@code --verify none}: it unlinks nothing on an unproven entry
     * @param settle   how long an entry stands before its segment may go
     */
    public LocalRelease(String shard, ObjectStore store, CopyProofs proofs, boolean proveNow, Duration settle,
                        Clock clock) {
        this.shard = Objects.requireNonNull(shard, "shard");
        this.store = store;
        this.proofs = Objects.requireNonNull(proofs, "proofs");
        this.proveNow = proveNow;
        this.settle = Objects.requireNonNull(settle, "settle");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (settle.isNegative()) {
            throw new IllegalArgumentException("settle time must not be negative, got " + settle);
        }
    }

    /**
     * Whether sealed segment {@code f} may go now in favour of {@code entry} (null: the manifest has
     * none). {@code knownValidCrc}, when present, is the CRC32 of its valid bytes from a full scan this
     * pass made, saving a second one. {@code manifest} is the manifest read now; a proof made here is
     * kept for its entries.
     */
    public Decision decide(SegmentFile f, ManifestEntry entry, Manifest manifest, OptionalLong knownValidCrc)
            throws IOException {
        String segment = "segment " + Long.toUnsignedString(f.id());
        if (entry == null) {
            return new Decision.Keep(KeptReason.NO_ENTRY, segment + " has no manifest entry", null, null);
        }
        // When this entry's copy was first proven: the settle time runs from then. Re-verifying a
        // damaged segment's copy later does not make its entry any newer.
        OptionalLong provenBefore = proofs.since(entry);
        Finding finding = null;
        boolean knownMatch = knownValidCrc.isPresent() && knownValidCrc.getAsLong() == Integer.toUnsignedLong(entry.objectCrc32())
                && Files.size(f.log()) >= entry.sizeBytes();
        if (!knownMatch) {
            LocalCopyCheck check;
            try {
                check = LocalCopyCheck.of(shard, f, entry);
            } catch (NoSuchFileException gone) {
                return new Decision.Keep(KeptReason.GONE, segment + " was removed meanwhile", null, null);
            }
            if (check.damaged()) {
                Decision damaged = damaged(f, entry, check, manifest);
                if (damaged instanceof Decision.Keep) {
                    return damaged;
                }
                finding = damaged.finding();
            } else if (!check.matches()) {
                return mismatch(f, entry, check);
            }
        }
        String how = proofs.how(entry);
        if (how == null) {
            Decision.Keep unproven = proveNow(f, entry, manifest);
            if (unproven != null) {
                return unproven;
            }
            how = proofs.how(entry);
        }
        // A first proof made now counts from this rule's now, whatever clock wrote it.
        Instant since = Instant.ofEpochMilli(provenBefore.isPresent() ? provenBefore.getAsLong()
                : Math.max(clock.millis(), proofs.since(entry).orElse(0)));
        Instant until = since.plus(settle);
        if (clock.instant().isBefore(until)) {
            return new Decision.Keep(KeptReason.SETTLING, segment + "'s entry was recorded at " + since
                    + "; it stays until " + until + ", once the manifest read again still holds it", until, finding);
        }
        return new Decision.Release(how, finding);
    }

    /** A damaged local segment: goes only once its copy re-verifies against the entry now. */
    private Decision damaged(SegmentFile f, ManifestEntry entry, LocalCopyCheck check, Manifest manifest)
            throws IOException {
        long at = check.localBytes(); // where the first failing record begins
        if (store == null) {
            return new Decision.Keep(KeptReason.LOCAL_DAMAGED, check.mismatch(), null, new Finding(FindingKind.LOCAL_DAMAGED,
                    f.id(), at, check.mismatch() + "; kept: this store cannot re-prove the copy"));
        }
        CopyProver.Outcome proof;
        try {
            proof = new CopyProver(store).prove(entry);
        } catch (StoreException e) {
            return new Decision.Keep(KeptReason.LOCAL_DAMAGED, check.mismatch(), null, new Finding(FindingKind.LOCAL_DAMAGED,
                    f.id(), at, check.mismatch() + "; kept: its copy " + entry.objectKey() + " could not be re-verified: "
                    + e.getMessage()));
        }
        if (!proof.proven()) {
            return new Decision.Keep(KeptReason.LOCAL_DAMAGED, check.mismatch(), null, new Finding(FindingKind.LOCAL_DAMAGED,
                    f.id(), at, check.mismatch() + "; kept: its copy no longer matches its entry either ("
                    + proof.mismatch() + ")"));
        }
        writeProof(entry, proof.how(), manifest);
        return new Decision.Release(proof.how(), new Finding(FindingKind.LOCAL_DAMAGED, f.id(), at, check.mismatch()
                + "; removed locally: its copy " + entry.objectKey() + " re-verified against its entry by "
                + proof.how() + ", reads of the segment's offsets are served from it"));
    }

    /** A local segment that scans clean but is not its entry's bytes: which is right is unknown, so it stays. */
    private Decision mismatch(SegmentFile f, ManifestEntry entry, LocalCopyCheck check) throws IOException {
        long at = -1;
        String where = "";
        if (store != null) {
            try {
                at = CopyDifference.firstDifference(store, entry, f.log());
            } catch (StoreException e) {
                where = " (the copy could not be read to find the first differing byte: " + e.getMessage() + ")";
            }
        }
        return new Decision.Keep(KeptReason.DIFFERS_FROM_ENTRY, check.mismatch(), null, new Finding(
                FindingKind.LOCAL_MISMATCH, f.id(), at, check.mismatch() + where + "; segment "
                + Long.toUnsignedString(f.id()) + " scans clean locally but is not its copy's bytes, so which is "
                + "right is not known: kept"));
    }

    /** Proves an entry's copy now where this caller may; null when proven (and the proof written). */
    private Decision.Keep proveNow(SegmentFile f, ManifestEntry entry, Manifest manifest) {
        String segment = "segment " + Long.toUnsignedString(entry.segmentId());
        if (!proveNow) {
            return new Decision.Keep(KeptReason.RECORDED_WITHOUT_PROOF, segment + " was recorded without a proven copy "
                    + "(--verify none); it stays local until retention proves the copy", null, null);
        }
        if (store == null) {
            return new Decision.Keep(KeptReason.COPY_NOT_PROVABLE, segment + " has no proven copy and this caller cannot "
                    + "read the store to prove it", null, null);
        }
        CopyProver.Outcome outcome;
        try {
            outcome = new CopyProver(store).prove(entry, f.log());
        } catch (StoreException e) {
            return new Decision.Keep(KeptReason.COPY_NOT_PROVABLE, segment + " stays local: its copy could not be proven ("
                    + e.getMessage() + ")", null, null);
        }
        if (!outcome.proven()) {
            return new Decision.Keep(KeptReason.COPY_UNPROVEN, outcome.mismatch(), null,
                    new Finding(FindingKind.COPY_UNPROVEN, entry.segmentId(), -1, outcome.mismatch()));
        }
        LOG.info("{}: proved the copy of segment {} by {} before its local file may go", shard,
                Long.toUnsignedString(entry.segmentId()), outcome.how());
        writeProof(entry, outcome.how(), manifest);
        return null;
    }

    private void writeProof(ManifestEntry entry, String how, Manifest manifest) {
        try {
            proofs.prove(entry, how, manifest);
        } catch (IOException e) {
            // Derived: a proof not written is only made again; the settle time then runs from the next one.
            LOG.warn("{}: could not write {} ({})", shard, CopyProofs.FILE_NAME, e.getMessage());
        }
    }

    /**
     * Unlinks {@code f} (and its index) after {@link #decide} said {@link Decision.Release}: first
     * reads the manifest on disk again and compares it with what {@code manifests} last read or wrote
     * (a {@link dev.felix.offload.manifest.ManifestChangedException} when the broker replaced it).
     * The caller fsyncs the directory once it is done unlinking.
     *
     * @return false when the segment was removed meanwhile (by the broker)
     */
    public static boolean release(SegmentFile f, ManifestStore manifests) throws IOException {
        // The entry is the only proof the local file may go: is it still the broker's manifest, now?
        manifests.checkUnchanged();
        return unlink(f);
    }

    /**
     * True when {@code f}, followed by {@code next}, is a sealed segment without a record: it scans
     * clean to no record and {@code next} begins at its base offset. A roll of an empty active segment
     * leaves one; it has no entry, because there is nothing to copy, and holds nothing to lose.
     */
    public boolean isEmptySealed(SegmentFile f, SegmentFile next) throws IOException {
        try {
            if (Files.size(f.log()) > SegmentHeader.LENGTH) {
                return false;
            }
            SegmentScan scan = SegmentScan.of(f.log(), shard, f.id(), ScanDepth.RECORDS);
            if (!scan.isClean() || scan.recordCount() != 0) {
                return false;
            }
            SegmentScan after = SegmentScan.of(next.log(), shard, next.id(), ScanDepth.HEADERS);
            return after.header() != null && after.header().baseOffset() == scan.nextOffset();
        } catch (NoSuchFileException gone) {
            return false; // removed meanwhile; the next pass sees the directory as it is then
        }
    }

    /**
     * Unlinks an empty sealed segment ({@link #isEmptySealed}); it holds no record, so no manifest
     * entry stands for it. False when it was removed meanwhile.
     */
    public static boolean releaseEmpty(SegmentFile f) throws IOException {
        return unlink(f);
    }

    /** Unlinks the segment and its index; false when the segment was removed meanwhile. */
    private static boolean unlink(SegmentFile f) throws IOException {
        try {
            Files.delete(f.log());
        } catch (NoSuchFileException gone) {
            return false;
        }
        Files.deleteIfExists(f.index());
        return true;
    }

    /** The settle time this rule applies. */
    public Duration settle() {
        return settle;
    }

    /** The entry of {@code manifest} for {@code f} (same segment id and base offset), or null. */
    public static ManifestEntry entryFor(Manifest manifest, SegmentFile f, long baseOffset) {
        for (ManifestEntry e : manifest.entries()) {
            if (e.segmentId() == f.id() && e.baseOffset() == baseOffset) {
                return e;
            }
        }
        return null;
    }
}
