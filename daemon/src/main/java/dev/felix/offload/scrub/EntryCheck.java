package dev.felix.offload.scrub;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.copy.CopyDifference;
import dev.felix.offload.copy.LocalCopyCheck;
import dev.felix.offload.copy.ReadBack;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.schedule.FailureKind;
import dev.felix.offload.scrub.Scrub.Anomaly;
import dev.felix.offload.scrub.Scrub.Kind;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The check of one manifest entry in a scrub run: its object against the entry (a HEAD for its size,
 * then the server's CRC32 or a full read), and its segment against the entry where it is still on
 * local disk. Safe for the run's checking threads at once; counts the requests it makes.
 */
final class EntryCheck {

    /** Full reads go in pieces of this size. */
    static final int READ_CHUNK = ReadBack.DEFAULT_CHUNK;
    static final int READ_CHUNK_MB = READ_CHUNK / (1024 * 1024);

    /** How an object's CRC32 was found, as a report's {@code checkedBy} names it. */
    static final String SERVER_CHECKSUM = "server-checksum";
    static final String READ_BACK = "read-back";

    /**
     * What checking one entry found, to be taken in the entries' order.
     *
     * @param checked      how the object was checked and what it found; null for an unreadable manifest
     * @param first        what was found before the check (a key outside the shard's prefix, an unreadable manifest)
     * @param checkAnomaly what the object's check found, if the entry still stands
     * @param local        what the local segment's comparison found, if the entry still stands
     * @param storeFailed  the check's anomaly is the store failing a request, not the object
     */
    record Findings(Checked checked, List<Anomaly> first, Anomaly checkAnomaly, Anomaly local, boolean storeFailed) {

        /** A shard's manifest that does not decode, in its place in the order. */
        static Findings unreadableManifest(Anomaly anomaly) {
            return new Findings(null, List.of(anomaly), null, null, false);
        }
    }

    /**
     * @param how         {@link #SERVER_CHECKSUM} or {@link #READ_BACK}; null when the object was not checked
     * @param anomaly     what was wrong with the object, or null
     * @param storeFailed the anomaly is the store failing a request (unreachable, timing out), not the object
     */
    record Checked(String how, Anomaly anomaly, boolean storeFailed) {
        Checked(String how, Anomaly anomaly) {
            this(how, anomaly, false);
        }
    }

    private final ObjectStore store;
    private final Scrub.Share fullShare;
    private final boolean storedCrc;
    private final RateLimiter limiter;
    private final AtomicLong requests = new AtomicLong();

    /**
     * @param storedCrc whether a CRC32 the server keeps stands for an object's bytes (but for
     *                  {@code fullShare}, read in full whatever the server keeps)
     * @param limiter   the limit of full reads in bytes a second, or null for none
     */
    EntryCheck(ObjectStore store, Scrub.Share fullShare, boolean storedCrc, RateLimiter limiter) {
        this.store = store;
        this.fullShare = fullShare;
        this.storedCrc = storedCrc;
        this.limiter = limiter;
    }

    /** Requests made so far (HEADs and GETs). */
    long requests() {
        return requests.get();
    }

    /**
     * The most requests checking {@code entry} may take: its HEAD, and the GETs of a full read unless
     * the server's checksum is expected to stand for it.
     */
    long cost(ManifestEntry entry) {
        if (storedCrc && !fullShare.readsInFull(entry.objectKey())) {
            return 1;
        }
        return 1 + (entry.sizeBytes() + READ_CHUNK - 1) / READ_CHUNK;
    }

    /**
     * Checks one entry, its object and its local segment (on a scrub thread). An anomaly counts only
     * while the shard's manifest, read again then, still has the entry: one that retention removed
     * meanwhile is none.
     */
    Findings findings(Path dir, String shard, ManifestEntry entry, List<Anomaly> first, StopSignal stop) {
        Checked c = check(shard, entry, stop);
        Anomaly checkAnomaly = c.anomaly() != null && stillNamed(dir, entry) ? c.anomaly() : null;
        Anomaly local = checkLocal(dir, shard, entry, c.anomaly() == null && c.how() != null);
        if (local != null && !stillNamed(dir, entry)) {
            local = null;
        }
        return new Findings(c, first, checkAnomaly, local, checkAnomaly != null && c.storeFailed());
    }

    private Checked check(String shard, ManifestEntry entry, StopSignal stop) {
        String key = entry.objectKey();
        long segment = entry.segmentId();
        long expectedCrc = Integer.toUnsignedLong(entry.objectCrc32());
        try {
            requests.incrementAndGet();
            ObjectHead head = store.head(key);
            if (head.size() != entry.sizeBytes()) {
                return new Checked(null, Anomaly.ofEntry(Kind.SIZE_MISMATCH, shard, segment, key,
                        "the store holds " + head.size() + " bytes, the manifest says " + entry.sizeBytes()));
            }
            long crc;
            String how;
            if (storedCrc && head.crc32().isPresent() && !fullShare.readsInFull(key)) {
                crc = head.crc32().getAsLong();
                how = SERVER_CHECKSUM;
            } else {
                OptionalLong read = readCrc(key, head.size(), stop);
                if (read.isEmpty()) {
                    return new Checked(null, null); // stopped in the middle: not checked
                }
                crc = read.getAsLong();
                how = READ_BACK;
            }
            if (crc != expectedCrc) {
                return new Checked(how, Anomaly.ofEntry(Kind.CRC_MISMATCH, shard, segment, key,
                        String.format("crc32 %08x by %s, the manifest says %08x", crc, how, expectedCrc)));
            }
            return new Checked(how, null);
        } catch (ObjectNotFoundException e) {
            return new Checked(null, Anomaly.ofEntry(Kind.MISSING, shard, segment, key, "the store has no such object"));
        } catch (StoreException e) {
            return new Checked(null, Anomaly.ofEntry(Kind.UNREADABLE, shard, segment, key,
                    FailureKind.of(e) + ": " + e.getMessage()), e instanceof TransientStoreException);
        }
    }

    /** The CRC32 of the whole object, read back in pieces, each counted and paced; empty when a stop came first. */
    private OptionalLong readCrc(String key, long size, StopSignal stop) throws StoreException {
        return ReadBack.crc32(store, key, size, READ_CHUNK, n -> {
            if (limiter != null) {
                limiter.acquire((int) n);
            }
            requests.incrementAndGet();
        }, stop::stopRequested);
    }

    /**
     * The entry's segment, when it is still on local disk, against the entry: a local-mismatch
     * anomaly when its valid bytes are not the entry's, else null.
     *
     * @param copyProven whether this scrub just proved the entry's object
     */
    private Anomaly checkLocal(Path dir, String shard, ManifestEntry entry, boolean copyProven) {
        SegmentFile f = SegmentFile.in(dir, entry.segmentId());
        if (!Files.exists(f.log())) {
            return null;
        }
        try {
            LocalCopyCheck check = LocalCopyCheck.of(shard, f, entry);
            if (check.matches()) {
                return null;
            }
            if (check.damaged()) {
                return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), OptionalLong.of(check.localBytes()),
                        check.mismatch() + (copyProven ? "; its copy is proven (checked by this scrub), so retention "
                                + "replaces the local file with it" : "; its copy is not proven either"));
            }
            long at = CopyDifference.firstDifference(store, entry, f.log());
            return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), at < 0 ? OptionalLong.empty()
                    : OptionalLong.of(at), check.mismatch()
                    + "; it scans clean, so which is right is not known: retention keeps it");
        } catch (NoSuchFileException gone) {
            return null; // retention or the broker removed it meanwhile
        } catch (IOException | StoreException e) {
            return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), OptionalLong.empty(),
                    "the local segment could not be compared with its copy: " + e.getMessage());
        }
    }

    /** True when the shard's manifest, read again now, still has {@code entry}. */
    private static boolean stillNamed(Path dir, ManifestEntry entry) {
        try {
            return ManifestStore.read(dir).entries().stream()
                    .anyMatch(e -> e.segmentId() == entry.segmentId() && e.objectKey().equals(entry.objectKey()));
        } catch (IOException | CorruptionException e) {
            return true;
        }
    }
}
