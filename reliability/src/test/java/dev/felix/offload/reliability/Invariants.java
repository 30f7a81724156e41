package dev.felix.offload.reliability;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The promises the crash and fault tests hold the offloader to, checked from outside the process
 * over the data root and the store as they were left:
 * <ol>
 *   <li>every shard's manifest decodes (it is never torn);</li>
 *   <li>every manifest entry names an object of exactly its size and CRC32;</li>
 *   <li>no local segment is gone without a manifest entry for it (same id and base offset);</li>
 *   <li>every offset ever acknowledged reads back, locally or from the store through
 *       {@link TieredReader}, with identical bytes (offset, timestamp, kind, batch tag, payload);</li>
 *   <li>objects no manifest names (orphans) are only copies of segments that are still local,
 *       i.e. uploads whose entry was never recorded; they hold nothing a reader depends on.</li>
 * </ol>
 */
final class Invariants {

    private static final Pattern SEGMENT_KEY = Pattern.compile("(\\d{20})-(\\d{20})\\.(segment|index)");

    /** What a check saw. */
    record Seen(int entries, int orphans, long localRecords, long remoteRecords) {
    }

    private final Path root;
    private final List<ShardWriter> shards;
    private final ObjectStore store;
    /** One long-lived reader per shard, as a broker's reader stays up while the offloader crashes and restarts. */
    private final Map<String, TieredReader> readers = new HashMap<>();
    /** Objects whose size and CRC32 were proven, by key: the size and entity tag they had then. */
    private final Map<String, String> verified = new HashMap<>();

    /** A checker for one root; it keeps readers and what it proved between checks. */
    Invariants(Path root, List<ShardWriter> shards, ObjectStore store) {
        this.root = root;
        this.shards = shards;
        this.store = store;
    }

    /**
     * Checks every promise; {@code when} names the moment in failure messages. Reads go through the
     * long-lived readers; an object whose size and CRC32 were proven is read again only when the
     * listing shows another size or entity tag for it.
     */
    Seen check(String when) throws IOException, StoreException {
        return check(root, shards, store, when, readers, verified);
    }

    /** The node id the offloader keys objects under, or empty before any pass got that far. */
    static Optional<String> nodeId(Path root) throws IOException {
        try {
            String text = Files.readString(new DataRoot(root).identityFile(DataRoot.NODE_ID), StandardCharsets.UTF_8);
            return Optional.of(text.endsWith("\n") ? text.substring(0, text.length() - 1) : text);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** Checks every promise from scratch: fresh readers, every object read in full. */
    static Seen checkFresh(Path root, List<ShardWriter> shards, ObjectStore store, String when)
            throws IOException, StoreException {
        return check(root, shards, store, when, new HashMap<>(), new HashMap<>());
    }

    private static Seen check(Path root, List<ShardWriter> shards, ObjectStore store, String when,
                              Map<String, TieredReader> readers, Map<String, String> verified)
            throws IOException, StoreException {
        Optional<String> node = nodeId(root);
        List<ObjectSummary> listed = store.list("").toList();
        if (node.isEmpty()) {
            if (!listed.isEmpty()) {
                throw new AssertionError(when + ": the store holds " + listed.size()
                        + " objects but the root has no node id yet: " + listed.get(0).key());
            }
            for (ShardWriter w : shards) {
                checkReads(w, reader(readers, w, store), when);
            }
            return new Seen(0, 0, shards.stream().mapToLong(w -> w.records().size()).sum(), 0);
        }
        SegmentKeys keys = new SegmentKeys("", node.get());
        for (ObjectSummary o : listed) {
            if (!o.key().startsWith(keys.nodePrefix())) {
                throw new AssertionError(when + ": object " + o.key() + " is outside the node prefix " + keys.nodePrefix());
            }
        }
        int entries = 0;
        int orphans = 0;
        long local = 0;
        long remote = 0;
        // No key is named by two manifests: each shard's entries keep to its own prefix (checkEntries),
        // and this says so across the root, whatever the prefixes look like.
        Map<String, String> namedBy = new java.util.HashMap<>();
        for (ShardWriter w : shards) {
            Manifest manifest = manifest(w, when);
            for (var e : manifest.entries()) {
                String other = namedBy.putIfAbsent(e.objectKey(), w.dir().toString());
                if (other != null && !other.equals(w.dir().toString())) {
                    throw new AssertionError(when + ": key " + e.objectKey() + " is named by the manifests of both "
                            + other + " and " + w.dir());
                }
            }
            entries += manifest.size();
            checkEntries(w, manifest, store, keys, listed, verified, when);
            checkNothingLost(w, manifest, when);
            orphans += checkOrphans(w, manifest, listed, keys, when);
            long[] sources = checkReads(w, reader(readers, w, store), when);
            local += sources[0];
            remote += sources[1];
        }
        return new Seen(entries, orphans, local, remote);
    }

    static Manifest manifest(ShardWriter w, String when) throws IOException {
        try {
            return ManifestStore.read(w.dir());
        } catch (CorruptionException e) {
            throw new AssertionError(when + ": " + w.name() + ": the manifest does not decode: " + e.getMessage(), e);
        }
    }

    private static TieredReader reader(Map<String, TieredReader> readers, ShardWriter w, ObjectStore store) {
        return readers.computeIfAbsent(w.name(),
                n -> new TieredReader(w.dir(), store, new ChunkCache(store, 1024 * 1024, 64L * 1024 * 1024)));
    }

    /** Every entry names an object of its size and CRC32, under this shard's prefix. */
    private static void checkEntries(ShardWriter w, Manifest manifest, ObjectStore store, SegmentKeys keys,
                                     List<ObjectSummary> listed, Map<String, String> verified, String when)
            throws StoreException {
        Map<String, String> tags = new HashMap<>();
        for (ObjectSummary o : listed) {
            tags.put(o.key(), o.size() + "/" + o.etag());
        }
        for (ManifestEntry e : manifest.entries()) {
            String what = when + ": " + w.name() + ": entry of segment " + e.segmentId() + " (" + e.objectKey() + ")";
            if (!e.objectKey().startsWith(keys.shardPrefix(w.name()))) {
                throw new AssertionError(what + " names a key outside the shard's prefix");
            }
            String tag = tags.get(e.objectKey());
            if (tag == null) {
                throw new AssertionError(what + ": no such object in the store's listing");
            }
            if (tag.equals(verified.get(e.objectKey()))) {
                continue;
            }
            ObjectHead head = store.head(e.objectKey());
            if (head.size() != e.sizeBytes()) {
                throw new AssertionError(what + ": object is " + head.size() + " bytes, entry says " + e.sizeBytes());
            }
            byte[] bytes = store.readAll(e.objectKey(), (int) e.sizeBytes(), OptionalLong.empty());
            CRC32 crc = new CRC32();
            crc.update(bytes);
            if (crc.getValue() != Integer.toUnsignedLong(e.objectCrc32())) {
                throw new AssertionError(String.format("%s: object has crc32 %08x, entry says %08x", what, crc.getValue(),
                        Integer.toUnsignedLong(e.objectCrc32())));
            }
            verified.put(e.objectKey(), tag);
            Long base = w.segmentsEverSeen().get(e.segmentId());
            if (base == null || base != e.baseOffset()) {
                throw new AssertionError(what + ": base offset " + e.baseOffset() + " but the writer's segment "
                        + e.segmentId() + " began at " + base);
            }
        }
    }

    /** A segment the writer ever had is still local, or the manifest holds its entry. */
    private static void checkNothingLost(ShardWriter w, Manifest manifest, String when) throws IOException {
        Set<Long> localIds = new HashSet<>();
        for (SegmentFile f : SegmentFile.list(w.dir())) {
            localIds.add(f.id());
        }
        for (Map.Entry<Long, Long> s : w.segmentsEverSeen().entrySet()) {
            if (localIds.contains(s.getKey()) || w.emptySegments().contains(s.getKey())) {
                continue; // an empty sealed segment holds nothing to lose: it may go without an entry
            }
            boolean recorded = manifest.entries().stream()
                    .anyMatch(e -> e.segmentId() == s.getKey() && e.baseOffset() == s.getValue());
            if (!recorded) {
                throw new AssertionError(when + ": " + w.name() + ": segment " + s.getKey() + " (base " + s.getValue()
                        + ") is gone locally and the manifest has no entry for it; local: " + localIds
                        + ", manifest: " + manifest);
            }
        }
    }

    /** Unnamed objects under the shard's prefix are copies of still-local segments; answers how many. */
    private static int checkOrphans(ShardWriter w, Manifest manifest, List<ObjectSummary> listed, SegmentKeys keys,
                                    String when) {
        Set<String> named = new HashSet<>();
        for (ManifestEntry e : manifest.entries()) {
            named.add(e.objectKey());
            named.add(SegmentKeys.indexKeyFor(e.objectKey()));
        }
        String prefix = keys.shardPrefix(w.name());
        int orphans = 0;
        for (ObjectSummary o : listed) {
            if (!o.key().startsWith(prefix) || named.contains(o.key())) {
                continue;
            }
            Matcher m = SEGMENT_KEY.matcher(o.key().substring(prefix.length()));
            if (!m.matches()) {
                throw new AssertionError(when + ": unexpected object " + o.key());
            }
            long id = Long.parseUnsignedLong(m.group(2));
            if (!Files.exists(SegmentFile.in(w.dir(), id).log())) {
                throw new AssertionError(when + ": orphan " + o.key() + " is the copy of segment " + id
                        + ", which is gone locally without an entry");
            }
            orphans++;
        }
        return orphans;
    }

    /** Reads every acknowledged offset through {@code reader}; answers {local, remote} counts. */
    static long[] checkReads(ShardWriter w, TieredReader reader, String when) {
        List<Record> expected = w.records();
        long next = 0;
        long local = 0;
        long remote = 0;
        int rounds = 0;
        while (next < expected.size()) {
            if (++rounds > expected.size() + 10) {
                throw new AssertionError(when + ": " + w.name() + ": reads make no progress at offset " + next);
            }
            TieredRead r;
            try {
                r = reader.read(next, 1000, 4L * 1024 * 1024);
            } catch (IOException | CorruptionException | StoreException e) {
                throw new AssertionError(when + ": " + w.name() + ": reading offset " + next + " failed: " + e, e);
            }
            if (r instanceof TieredRead.Trimmed t) {
                throw new AssertionError(when + ": " + w.name() + ": offset " + next + " of " + expected.size()
                        + " acknowledged is gone (trimmed; next available " + t.nextAvailable() + ")");
            }
            if (r instanceof TieredRead.Gap g) {
                throw new AssertionError(when + ": " + w.name() + ": offsets " + g.firstMissing() + ".." + g.lastMissing()
                        + " of " + expected.size() + " acknowledged are held nowhere (a gap; next available "
                        + g.nextAvailable() + ")");
            }
            TieredRead.Records records = (TieredRead.Records) r;
            if (records.records().isEmpty()) {
                throw new AssertionError(when + ": " + w.name() + ": offset " + next + " reads as the end of the log, but "
                        + expected.size() + " records were acknowledged");
            }
            for (TieredRead.SourcedRecord sr : records.records()) {
                Record got = sr.record();
                if (got.offset() != next || got.offset() >= expected.size()) {
                    throw new AssertionError(when + ": " + w.name() + ": expected offset " + next + ", read " + got);
                }
                Record want = expected.get((int) next);
                if (!want.equals(got)) {
                    throw new AssertionError(when + ": " + w.name() + ": offset " + next + " reads back as " + got
                            + " (" + (sr.remote() ? "remote" : "local") + "), acknowledged as " + want);
                }
                if (sr.remote()) {
                    remote++;
                } else {
                    local++;
                }
                next++;
            }
        }
        return new long[] {local, remote};
    }

    /** Keys under the node's prefix that no manifest of these shards names. */
    static List<String> unnamed(Path root, List<ShardWriter> shards, ObjectStore store) throws IOException, StoreException {
        Optional<String> node = nodeId(root);
        if (node.isEmpty()) {
            return List.of();
        }
        Set<String> named = new HashSet<>();
        for (ShardWriter w : shards) {
            for (ManifestEntry e : manifest(w, "unnamed").entries()) {
                named.add(e.objectKey());
                named.add(SegmentKeys.indexKeyFor(e.objectKey()));
            }
        }
        SegmentKeys keys = new SegmentKeys("", node.get());
        named.add(dev.felix.offload.root.NodeClaim.keyFor(keys)); // the root's claim on its node id, never an orphan
        List<String> out = new ArrayList<>();
        for (ObjectSummary o : store.list(keys.nodePrefix()).toList()) {
            // the node's lease (NodeClaim.isClaimKey covers it) is the root's bookkeeping, never an orphan either
            if (!named.contains(o.key()) && !dev.felix.offload.root.NodeClaim.isClaimKey(keys.nodePrefix(), o.key())) {
                out.add(o.key());
            }
        }
        return out;
    }
}
