package dev.felix.offload.retention;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.root.PendingKeys;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * When the orphan sweep lists the node's whole prefix, and what it knows otherwise.
 *
 * <p>Orphans come only from this node's own requests cut short (an upload before its entry, a delete
 * that failed), and each such key is in the root's journal of pending writes ({@link PendingKeys})
 * before its request is sent. The usual sweep therefore checks those keys alone: a key a manifest
 * names leaves the journal with no request at all, one the store does not hold (HEAD: not found) leaves
 * it too, and only what is left is judged. A full listing of the prefix still runs:
 * <ul>
 *   <li>every {@link OrphanSweepSettings#fullSweepEvery()} (24 hours by default), counted from the last
 *       full sweep this root recorded in {@value #FILE_NAME} (epoch milliseconds, one line): keys written
 *       by something other than this node's passes (an older version, a hand upload, a restore of an
 *       old snapshot of the root) are found there, and held shards are reported;</li>
 *   <li>when the journal is missing (a root that never had one, a lost file) or damaged: the keys it
 *       held are unknown, which is never taken for "nothing pending";</li>
 *   <li>when an operator asks for one ({@code retention --full-sweep}).</li>
 * </ul>
 * A full sweep's listing is made before the root's lock is taken ({@link RetentionPass#prelist}), so an
 * offload pass runs beside it; every decision is taken later under the lock, against the manifests
 * as they are then.
 */
public final class FullSweep {

    private static final Logger LOG = LoggerFactory.getLogger(FullSweep.class);

    static final String FILE_NAME = "offload.sweep";

    /** The journal as read: its keys, or why they are unknown (null when they are known, or it is missing). */
    record Journal(Optional<Set<String>> keys, Why problem) {
    }

    /** Why a pass lists the node's whole prefix; callers tell the cases apart by type, {@link #label()} is for output. */
    public sealed interface Why {
        /** What a log line or a report says of it. */
        String label();

        /** An operator asked for a full sweep ({@code retention --full-sweep}). */
        record Asked() implements Why {
            @Override
            public String label() {
                return "asked for";
            }
        }

        /** The journal of pending writes does not decode: the keys it held are unknown. */
        record JournalDamaged(Path journal, String problem) implements Why {
            @Override
            public String label() {
                return journal + " damaged: " + problem;
            }
        }

        /** The journal of pending writes could not be read. */
        record JournalUnreadable(Path journal, String problem) implements Why {
            @Override
            public String label() {
                return journal + " unreadable: " + problem;
            }
        }

        /** No journal of pending writes (a root that never had one, a lost file). */
        record JournalMissing(Path journal) implements Why {
            @Override
            public String label() {
                return journal + " is missing";
            }
        }

        /** The cadence is zero: every pass lists everything. */
        record EveryPass() implements Why {
            @Override
            public String label() {
                return "every pass (full-sweep-every 0)";
            }
        }

        /** This root recorded no full sweep yet. */
        record NoneRecorded() implements Why {
            @Override
            public String label() {
                return "no full sweep recorded";
            }
        }

        /** The last full sweep is a cadence ago or more (or later than now: a clock set back). */
        record Due(Instant last, Duration every) implements Why {
            @Override
            public String label() {
                return "the last full sweep was at " + last + ", " + every + " ago or more";
            }
        }
    }

    /**
     * The node prefix's keys no manifest named when listed, made before the root's lock was taken.
     *
     * @param reason  why this pass lists everything
     * @param unnamed what the listing held that the manifests read just before did not name
     * @param listed  how many keys the listing held
     * @param failure why the listing failed, or null
     */
    public record Listing(Why reason, List<ObjectSummary> unnamed, long listed, String failure) {
        public Listing {
            unnamed = List.copyOf(unnamed);
        }
    }

    private FullSweep() {
    }

    /** Lists {@code prefix}, keeping what {@code unnamed} accepts: a listing's failure is carried, not thrown. */
    static Listing list(ObjectStore store, String prefix, Why reason, java.util.function.Predicate<String> unnamed) {
        List<ObjectSummary> kept = new java.util.ArrayList<>();
        long listed = 0;
        try {
            ObjectListing listing = store.list(prefix);
            while (listing.hasNext()) {
                ObjectSummary o = listing.next();
                listed++;
                if (unnamed.test(o.key())) {
                    kept.add(o);
                }
            }
        } catch (StoreException e) {
            return new Listing(reason, List.of(), listed, e.getMessage());
        }
        return new Listing(reason, kept, listed, null);
    }

    /**
     * The journal's keys the store holds (one HEAD each): a key it does not hold was never uploaded (the
     * request did not begin, or failed) or was deleted, and nothing of it is left.
     */
    static List<Unnamed> present(ObjectStore store, java.util.Collection<String> keys) throws StoreException {
        List<Unnamed> out = new java.util.ArrayList<>();
        for (String key : keys) {
            try {
                ObjectHead head = store.head(key);
                out.add(new Unnamed(key, head.size(), head.etag()));
            } catch (ObjectNotFoundException gone) {
                // nothing left to judge
            }
        }
        return out;
    }

    /** Takes deleted keys out of the journal; a damaged one is left for the next full sweep to write again. */
    static void done(Path root, java.util.Collection<String> deleted) throws IOException {
        Journal j = journal(root);
        if (j.keys().isPresent()) {
            Set<String> left = new java.util.LinkedHashSet<>(j.keys().get());
            left.removeAll(deleted);
            PendingKeys.rewrite(root, left);
        }
    }

    static Journal journal(Path root) {
        try {
            return new Journal(PendingKeys.read(root), null);
        } catch (CorruptionException e) {
            LOG.warn("the journal of pending writes is damaged ({}); the orphan sweep lists the whole prefix",
                    e.getMessage());
            return new Journal(Optional.empty(), new Why.JournalDamaged(PendingKeys.fileIn(root), e.getMessage()));
        } catch (IOException e) {
            return new Journal(Optional.empty(), new Why.JournalUnreadable(PendingKeys.fileIn(root), e.getMessage()));
        }
    }

    /** Why this pass must list the whole prefix, or null when the journal's keys are enough. */
    static Why reason(Path root, OrphanSweepSettings settings, Instant now, Journal journal) {
        if (settings.fullSweep()) {
            return new Why.Asked();
        }
        if (journal.problem() != null) {
            return journal.problem();
        }
        if (journal.keys().isEmpty()) {
            return new Why.JournalMissing(PendingKeys.fileIn(root));
        }
        if (settings.fullSweepEvery().isZero()) {
            return new Why.EveryPass();
        }
        Optional<Instant> last = last(root);
        if (last.isEmpty()) {
            return new Why.NoneRecorded();
        }
        Duration since = Duration.between(last.get(), now);
        if (since.compareTo(settings.fullSweepEvery()) >= 0 || since.isNegative()) {
            return new Why.Due(last.get(), settings.fullSweepEvery());
        }
        return null;
    }

    /** When the last full sweep of this root listed the prefix; empty when none is recorded (or it does not parse). */
    static Optional<Instant> last(Path root) {
        Path file = root.resolve(FILE_NAME);
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).trim();
            return Optional.of(Instant.ofEpochMilli(Long.parseLong(text)));
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            LOG.warn("{} does not read as a time ({}); the next sweep lists everything", file, e.getMessage());
            return Optional.empty();
        }
    }

    static void record(Path root, Instant at) throws IOException {
        DurableFiles.replace(root.resolve(FILE_NAME),
                (at.toEpochMilli() + "\n").getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
    }
}
