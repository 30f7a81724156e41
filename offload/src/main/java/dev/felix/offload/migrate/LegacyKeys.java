package dev.felix.offload.migrate;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.copy.CopyProver;
import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.copy.LargestTimestamps;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The objects a data root's manifests name outside its node's own prefix, and what an operator may
 * do with them ({@code felix-offload legacy-keys}):
 * <ul>
 *   <li><b>list</b> the entries naming such keys (without a node id, as 0.6.0-preview.3 wrote them;
 *       under a node id the root had before {@code reidentify}; anything else outside the shard's
 *       prefix), and the objects under a shard's prefix without a node id that no manifest of the
 *       root names any more (what retention kept when their entries expired);</li>
 *   <li><b>delete</b> such unnamed objects without a node id, of a shard or by key, only when the
 *       operator says no other replica needs them: before node ids, the replicas of a shard on every
 *       broker sharing the store named the same keys, and only the operator knows whether the
 *       others still do. A key a manifest of this root names, one under a node id, or one that is
 *       not a shard's key without a node id, is refused;</li>
 *   <li><b>migrate</b> entries to keys of their own: each object (and its index) is copied to the key
 *       the shard would upload it under now ({@code [prefix/]<node id>/<shard>/...}), create-only
 *       (never replacing an object: one already there is adopted only when it proves to be the same
 *       bytes), inside the store where it copies ({@link ObjectCopier}), else through this process,
 *       proven against the entry like any upload ({@link CopyProver}: the CRC-32 a server
 *       keeps, or a read-back), and only then is the entry re-recorded with the new key, one
 *       manifest write per shard. The old object stays: other roots may name it. From then on the
 *       root's own retention deletes its copy like any other.</li>
 * </ul>
 * The caller holds the root's lock, and passes a store that checks the node's lease before every
 * write ({@link dev.felix.offload.root.NodeLease}).
 */
public final class LegacyKeys {

    private static final Logger LOG = LoggerFactory.getLogger(LegacyKeys.class);

    private final DataRoot root;
    private final ObjectStore store;
    private final SegmentKeys keys;
    private final KeyOwnership ownership;

    public LegacyKeys(DataRoot root, ObjectStore store, SegmentKeys keys, KeyOwnership ownership) {
        this.root = Objects.requireNonNull(root, "root");
        this.store = Objects.requireNonNull(store, "store");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.ownership = Objects.requireNonNull(ownership, "ownership");
    }

    /** What kind of key outside the shard's own prefix an entry names. */
    public enum Kind {
        /** Without a node id (0.6.0-preview.3). */
        LEGACY("legacy-key"),
        /** Under a node id this root had before {@code reidentify}. */
        FORMER_NODE("former-node-key"),
        /** Anything else: another node's, another shard's (a copied shard directory), or no shard's. */
        FOREIGN("foreign-key");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** An entry naming a key outside its shard's own prefix. */
    public record Named(String shard, ManifestEntry entry, Kind kind) {
    }

    /** An object under a shard's prefix without a node id that no manifest of the root names. */
    public record Unnamed(String shard, String key, long size) {
    }

    /**
     * @param named      entries naming keys outside their shard's own prefix
     * @param unnamed    objects without a node id under a shard's prefix that no manifest names
     * @param unreadable shards whose manifest could not be read (what they name is unknown)
     */
    public record Survey(List<Named> named, List<Unnamed> unnamed, List<String> unreadable) {
    }

    /** Lists what {@link Survey} says, for every live shard of the root or the one named. */
    public Survey survey(Optional<String> onlyShard) throws IOException, StoreException {
        LiveKeys live = LiveKeys.read(root);
        List<Named> named = new ArrayList<>();
        List<Unnamed> unnamed = new ArrayList<>();
        List<String> unreadable = new ArrayList<>(live.unreadable());
        List<String> shards = new ArrayList<>();
        for (DataRoot.Shard s : root.streamShards()) {
            if (onlyShard.isEmpty() || onlyShard.get().equals(s.name())) {
                shards.add(s.name());
                try {
                    for (ManifestEntry e : ManifestStore.read(s.directory()).entries()) {
                        kindOf(s.name(), e.objectKey()).ifPresent(k -> named.add(new Named(s.name(), e, k)));
                    }
                } catch (NoSuchFileException absent) {
                    // no manifest: nothing offloaded
                } catch (CorruptionException e) {
                    if (!unreadable.contains(s.name())) {
                        unreadable.add(s.name());
                    }
                }
            }
        }
        if (onlyShard.isPresent() && !shards.contains(onlyShard.get())) {
            shards.add(onlyShard.get()); // a shard the root no longer has: its keys without a node id still count
        }
        for (String shard : shards) {
            ObjectListing listing = store.list(ownership.legacyShardPrefix(shard));
            while (listing.hasNext()) {
                ObjectSummary o = listing.next();
                if (ownership.isLegacyKey(shard, o.key()) && isLegacySegmentKey(o.key())
                        && live.shardsNaming(o.key()).isEmpty()) {
                    unnamed.add(new Unnamed(shard, o.key(), o.size()));
                }
            }
        }
        return new Survey(named, unnamed, unreadable);
    }

    private static final java.util.regex.Pattern OBJECT_NAME =
            java.util.regex.Pattern.compile("[0-9]{20}-[0-9]{20}\\.(segment|index)");

    /**
     * Whether {@code key} has the exact form of a segment or index key without a node id:
     * {@code [prefix/]<shard>/<base, 20 digits>-<segment, 20 digits>.segment|.index}, where the
     * shard is one directory name, or {@code groups/<dir>} or {@code dead-letters/<dir>}. Anything
     * else (another node's claim {@code <node>/node.claim}, another node's segment
     * {@code <node>/<shard>/...}, this node's keys) is not one, and never deleted as one.
     */
    public boolean isLegacySegmentKey(String key) {
        if (ownership.underNodePrefix(key)) {
            return false;
        }
        Optional<String> shard = ownership.shardOf(key);
        if (shard.isEmpty() || !ownership.isLegacyKey(shard.get(), key)) {
            return false;
        }
        String[] parts = shard.get().split("/", -1);
        boolean shardShape = parts.length == 1 || (parts.length == 2 && (parts[0].equals(DataRoot.GROUPS_DIR)
                || parts[0].equals(DataRoot.DEAD_LETTERS_DIR)));
        return shardShape && OBJECT_NAME.matcher(key.substring(key.lastIndexOf('/') + 1)).matches();
    }

    /** The kind of key outside the shard's own prefix, or empty for a key of its own. */
    public Optional<Kind> kindOf(String shard, String key) {
        if (ownership.inOwnShardPrefix(shard, key)) {
            return Optional.empty();
        }
        if (ownership.isLegacyKey(shard, key)) {
            return Optional.of(Kind.LEGACY);
        }
        if (ownership.isFormerNodeKey(shard, key)) {
            return Optional.of(Kind.FORMER_NODE);
        }
        return Optional.of(Kind.FOREIGN);
    }

    /**
     * What deleting keys without a node id did, or would do.
     *
     * @param deletable the keys that may go (deleted when {@code confirmed}), with their sizes
     * @param refused   keys that may not, with why
     * @param deleted   the keys deleted
     * @param problem   the store's failure part way, or null
     */
    public record Deletion(Map<String, Long> deletable, Map<String, String> refused, List<String> deleted,
                           String problem) {
    }

    /**
     * Deletes keys without a node id: those named ({@code given}), or every unnamed one under
     * {@code shard}'s prefix without a node id. Only with {@code confirmed} (the operator says no
     * other replica needs them); otherwise it only says what it would delete.
     */
    public Deletion delete(Optional<String> shard, List<String> given, boolean confirmed)
            throws IOException, StoreException {
        LiveKeys live = LiveKeys.read(root);
        Map<String, Long> deletable = new LinkedHashMap<>();
        Map<String, String> refused = new LinkedHashMap<>();
        if (!live.unreadable().isEmpty()) {
            for (String k : given) {
                refused.put(k, "the manifest of live shard(s) " + live.unreadable() + " is unreadable, so what it names "
                        + "is unknown");
            }
            if (shard.isPresent()) {
                refused.put(ownership.legacyShardPrefix(shard.get()), "the manifest of live shard(s) "
                        + live.unreadable() + " is unreadable, so what it names is unknown");
            }
            return new Deletion(deletable, refused, List.of(), null);
        }
        // Every key goes by the conservation rule's permit (ObjectRelease), which lifts the legacy-key
        // refusal only for the operator's naming, and only for keys no manifest of this root names.
        ObjectRelease release = new ObjectRelease(ownership, live);
        Map<String, ObjectRelease.Permit> permits = new LinkedHashMap<>();
        if (shard.isPresent()) {
            for (Unnamed u : survey(shard).unnamed()) {
                judge(release, u.key(), permits, refused);
                if (permits.containsKey(u.key())) {
                    deletable.put(u.key(), u.size());
                }
            }
        }
        for (String key : given) {
            if (!isLegacySegmentKey(key)) {
                refused.put(key, "not a shard's key without a node id (only retention and the orphan sweep delete this "
                        + "node's keys, and nothing deletes another node's)");
            } else if (!live.shardsNaming(key).isEmpty()) {
                refused.put(key, "named by the manifest of " + live.shardsNaming(key) + " of this root");
            } else {
                try {
                    long size = store.head(key).size();
                    judge(release, key, permits, refused);
                    if (permits.containsKey(key)) {
                        deletable.put(key, size);
                    }
                } catch (ObjectNotFoundException gone) {
                    refused.put(key, "no such object");
                }
            }
        }
        if (!confirmed || deletable.isEmpty()) {
            return new Deletion(deletable, refused, List.of(), null);
        }
        List<ObjectRelease.Permit> all = new ArrayList<>(permits.values());
        List<String> deleted = new ArrayList<>();
        for (int from = 0; from < all.size(); from += 1000) {
            List<String> batch = all.subList(from, Math.min(all.size(), from + 1000)).stream()
                    .map(ObjectRelease.Permit::key).toList();
            try {
                store.deleteAll(batch);
            } catch (StoreException e) {
                return new Deletion(deletable, refused, deleted, e.getMessage());
            }
            deleted.addAll(batch);
            batch.forEach(k -> LOG.info("deleted {} (no node id; the operator said no other replica needs it)", k));
        }
        return new Deletion(deletable, refused, deleted, null);
    }

    /** Asks the rule for {@code key}, a shard's key without a node id: a permit, or why it stays. */
    private void judge(ObjectRelease release, String key, Map<String, ObjectRelease.Permit> permits,
                       Map<String, String> refused) {
        String shard = ownership.shardOf(key).orElseThrow(); // isLegacySegmentKey holds: it has one
        ObjectRelease.Verdict v = release.legacyKeyNamedByOperator(shard, key);
        if (v instanceof ObjectRelease.Verdict.Deletable d) {
            permits.put(key, d.permit());
        } else if (v instanceof ObjectRelease.Verdict.Kept k) {
            refused.put(key, k.detail());
        }
    }

    /**
     * What migrating one shard did.
     *
     * @param shard    the shard
     * @param migrated old key to new key (and how it was copied and proven), for each entry re-recorded
     * @param skipped  old key to why it stays as it is
     * @param problem  why the shard stopped part way (its manifest, a store failure), or null
     */
    public record Migration(String shard, Map<String, String> migrated, Map<String, String> skipped, String problem) {
    }

    /** Migrates the entries of every live shard, or the one named, to keys of their own (see the class comment). */
    public List<Migration> migrate(Optional<String> onlyShard) throws IOException {
        List<Migration> out = new ArrayList<>();
        for (DataRoot.Shard s : root.streamShards()) {
            if (onlyShard.isEmpty() || onlyShard.get().equals(s.name())) {
                out.add(migrateShard(s.name(), s.directory()));
            }
        }
        return out;
    }

    private Migration migrateShard(String shard, Path dir) throws IOException {
        Map<String, String> migrated = new LinkedHashMap<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        ManifestStore manifests;
        try {
            manifests = ManifestStore.open(dir);
        } catch (CorruptionException e) {
            return new Migration(shard, migrated, skipped, "manifest unreadable, nothing done: " + e.getMessage());
        }
        Manifest manifest = manifests.manifest();
        Map<ManifestEntry, ManifestEntry> renamed = new LinkedHashMap<>();
        Map<ManifestEntry, String> how = new LinkedHashMap<>();
        Map<String, String> described = new LinkedHashMap<>();
        for (ManifestEntry e : manifest.entries()) {
            if (kindOf(shard, e.objectKey()).isEmpty()) {
                continue;
            }
            if (!e.objectKey().endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                skipped.put(e.objectKey(), "not a segment key: nothing to copy it to");
                continue;
            }
            String target = keys.segmentKey(shard, e.baseOffset(), e.segmentId());
            ManifestEntry moved = new ManifestEntry(e.segmentId(), e.baseOffset(), e.lastOffset(), e.sizeBytes(),
                    e.oldestTimestampMicros(), e.newestTimestampMicros(), e.objectCrc32(), target);
            try {
                Optional<String> proof = copy(e, moved);
                if (proof.isEmpty()) {
                    skipped.put(e.objectKey(), "the store already holds other bytes at " + target + ": not replaced");
                    continue;
                }
                if (SegmentKeys.hasIndexObject(e.sizeBytes())) {
                    copyIndex(e.objectKey(), target); // a smaller segment's index would never be read
                }
                renamed.put(e, moved);
                how.put(moved, proof.get().substring(proof.get().lastIndexOf(' ') + 1));
                described.put(e.objectKey(), target + " (" + proof.get() + ")");
            } catch (StoreException ex) {
                skipped.put(e.objectKey(), "copying to " + target + " failed: " + ex.getMessage());
            } catch (Unproven ex) {
                skipped.put(e.objectKey(), ex.getMessage());
            }
        }
        if (renamed.isEmpty()) {
            return new Migration(shard, migrated, skipped, null);
        }
        List<ManifestEntry> next = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            next.add(renamed.getOrDefault(e, e));
        }
        Manifest nextManifest = Manifest.of(next);
        LargestTimestamps side = LargestTimestamps.load(dir);
        renamed.forEach((old, moved) -> side.of(old).ifPresent(v -> side.put(moved, v)));
        try {
            manifests.save(nextManifest);
        } catch (ManifestChangedException changed) {
            // The broker truncated or reset the shard meanwhile: the copies stay unnamed (the sweep's), and
            // the next run takes the shard up from the manifest as it is then.
            return new Migration(shard, migrated, skipped, "the broker changed offload.manifest meanwhile; nothing "
                    + "re-recorded, run again");
        }
        renamed.forEach((old, moved) -> migrated.put(old.objectKey(), described.get(old.objectKey())));
        try {
            side.save(nextManifest.entries());
            CopyProofs proofs = CopyProofs.read(dir);
            proofs.prove(how, nextManifest);
        } catch (IOException e) {
            LOG.warn("{}: side files not updated ({}); they are rebuilt when needed", shard, e.getMessage());
        }
        LOG.info("{}: {} entries re-recorded under {}", shard, migrated.size(), keys.shardPrefix(shard));
        return new Migration(shard, migrated, skipped, null);
    }

    /**
     * Copies {@code from}'s object to {@code to}'s key and proves it; answers how it was proven, or
     * empty when the key holds other bytes already (never replaced).
     */
    private Optional<String> copy(ManifestEntry from, ManifestEntry to) throws StoreException, IOException, Unproven {
        CopyProver prover = new CopyProver(store);
        long crc = Integer.toUnsignedLong(from.objectCrc32());
        Path temp = Files.createTempFile("felix-offload-migrate", DurableFiles.TEMP_SUFFIX);
        try {
            boolean written = false;
            String copied = "found there";
            try {
                store.head(to.objectKey());
            } catch (ObjectNotFoundException absent) {
                try {
                    written = serverSideCopy(from.objectKey(), to.objectKey());
                    copied = "copied inside the store";
                    if (!written) {
                        copied = "copied through this process";
                        // the object's bytes, checked against the entry's CRC-32 on the way, then put create-only
                        store.download(from.objectKey(), temp, OptionalLong.of(crc));
                        store.put(to.objectKey(), UploadBody.ofFile(temp),
                                PutOptions.defaults().withNoReplace().withCrc32(crc));
                        written = true;
                    }
                } catch (PreconditionFailedException raced) {
                    // written meanwhile: proven below like one found there
                }
            }
            CopyProver.Outcome outcome = prover.prove(to);
            if (!outcome.proven()) {
                if (written) {
                    throw new Unproven("the copy at " + to.objectKey() + " does not prove against its entry ("
                            + outcome.mismatch() + "); left to the orphan sweep");
                }
                return Optional.empty();
            }
            return Optional.of(copied + ", proven by " + outcome.how());
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * Copies inside the store where it can ({@link ObjectCopier}: S3's CopyObject, a file copy on the
     * filesystem store), so the bytes do not pass through this process; false where it cannot (no
     * such role, an object too large for one copy request), and the caller copies through it.
     */
    private boolean serverSideCopy(String source, String target) throws StoreException {
        Optional<ObjectCopier> copier = store.copier();
        if (copier.isEmpty()) {
            return false;
        }
        try {
            copier.get().copy(source, target);
            return true;
        } catch (CapabilityMissingException cannot) {
            LOG.info("copying {} through this process: {}", source, cannot.getMessage());
            return false;
        }
    }

    /** A copy this run wrote that does not prove against its entry. */
    private static final class Unproven extends Exception {
        private static final long serialVersionUID = 1L;

        Unproven(String message) {
            super(message);
        }
    }

    /** Copies the index beside a segment object, when there is one and none at the target. */
    private void copyIndex(String fromSegment, String toSegment) throws StoreException {
        String from = SegmentKeys.indexKeyFor(fromSegment);
        String to = SegmentKeys.indexKeyFor(toSegment);
        byte[] bytes;
        try {
            bytes = store.readAll(from, 64 * 1024 * 1024, OptionalLong.empty());
        } catch (ObjectNotFoundException none) {
            return; // a reader scans from the segment's start without one
        }
        try {
            store.put(to, UploadBody.ofBytes(bytes), PutOptions.defaults().withNoReplace());
        } catch (PreconditionFailedException there) {
            // one is there already: readers check every index entry against the segment
        }
    }
}
