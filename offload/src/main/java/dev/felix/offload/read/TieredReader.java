package dev.felix.offload.read;


import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.felix.offload.log.ReadResult;
import dev.felix.offload.log.ShardReader;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.IndexedScan;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestLookup;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Reads a shard as one log across local disk and the object store. At or above the local base
 * offset it reads the local segments; below it, it finds the manifest entry holding the offset and
 * reads that object: the companion index gives a start position (for a large segment, from a run
 * of its entries fetched around the one needed, not the whole index), aligned chunks come through the
 * {@link ChunkCache}, and every record's checksums are verified, so records come back exactly as a
 * local read returns them. A read continues across chunks, objects, and on into the local log.
 *
 * <p>Below the oldest entry (or below the local base with nothing copied) the answer is
 * {@link TieredRead.Trimmed}; in a gap between entries, or between the newest entry and the local
 * base, it is {@link TieredRead.Gap}: both name the next offset that can be read.
 *
 * <p>A local segment that fails its checksums while the manifest holds its entry has rotted after
 * its copy was proven at upload; the damaged range is read from that copy instead (the records say
 * so by their source) and a warning names the segment and the byte. Without an entry the damage is
 * the answer.
 *
 * <p>Bytes that fail verification are dropped from the cache and fetched once more; if they fail
 * again, a {@link CorruptionException} names the object's key and the byte position. Corrupt bytes
 * are never returned as records. Before its first records are served, an object is checked against
 * its entry once (size, and the CRC-32 of its bytes or the one the store keeps): records of another
 * object at the entry's key never are ({@link CorruptionKind#OBJECT_MISMATCH}).
 */
public final class TieredReader {

    private static final Logger LOG = LoggerFactory.getLogger(TieredReader.class);

    /**
     * Entries fetched at a time from a large remote index: 32 KiB, which at the default spacing
     * covers some 8 MiB of segment. A 128 MiB segment's index is about 0.5 MiB, an eighth of a
     * chunk, which a random read would otherwise fetch whole for the one entry it needs.
     */
    public static final int DEFAULT_INDEX_WINDOW_ENTRIES = 2048;

    private final Path shardDir;
    private final String shard;
    private final ShardReader local;
    private final ObjectFetcher store;
    private final ChunkCache chunks;
    /** Where a read of an object starts: its remote index, whole or in runs. */
    private final RemoteIndexes remoteIndexes;
    private final Cache<ObjectIdentity, SegmentHeader> headers = Caffeine.newBuilder().maximumSize(4096).build();
    /** Objects found to be the ones their entries name ({@link #checkObject}); dropped with the headers. */
    private final Cache<ObjectIdentity, Boolean> checked = Caffeine.newBuilder().maximumSize(16384).build();
    /**
     * Where the last read of each object stopped: the offset it would have taken next and that
     * record's byte position. A sequential reader's next read starts there without the index (one
     * GET fewer per object); like an index entry the point is checked, not trusted. Dropped with the
     * indexes.
     */
    private final Cache<ObjectIdentity, IndexedScan.Entry> resumePoints = Caffeine.newBuilder().maximumSize(1024).build();
    private volatile Manifest manifest;
    private volatile FileTime manifestTime;
    private volatile long manifestSize = -1;
    // The daemon shares one reader across its read threads: a volatile ++ there loses counts.
    private final java.util.concurrent.atomic.LongAdder remoteReads = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder localFallbacks = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder remoteRecordBytes = new java.util.concurrent.atomic.LongAdder();

    public TieredReader(Path shardDir, ObjectFetcher store, ChunkCache chunks) {
        this(dev.felix.offload.log.DataRoot.Shard.nameOf(shardDir), shardDir, store, chunks);
    }

    /** A reader of the shard named {@code shard} (its path under the data root) in {@code shardDir}. */
    public TieredReader(String shard, Path shardDir, ObjectFetcher store, ChunkCache chunks) {
        this(shard, shardDir, store, chunks, DEFAULT_INDEX_WINDOW_ENTRIES);
    }

    /**
     * As {@link #TieredReader(String, Path, ObjectFetcher, ChunkCache)}, fetching remote indexes
     * {@code indexWindowEntries} entries at a time where a segment is large enough for its index to
     * exceed two such runs.
     */
    public TieredReader(String shard, Path shardDir, ObjectFetcher store, ChunkCache chunks, int indexWindowEntries) {
        if (indexWindowEntries < 2) {
            throw new IllegalArgumentException("index runs of at least 2 entries, got " + indexWindowEntries);
        }
        this.shardDir = shardDir;
        this.shard = shard;
        this.local = new ShardReader(shardDir, shard);
        this.store = store;
        this.chunks = chunks;
        this.remoteIndexes = new RemoteIndexes(shard, store, indexWindowEntries, chunks.indexCaches());
    }

    /** Reads made from the store so far. */
    public long remoteReads() {
        return remoteReads.sum();
    }

    /** Reads of damaged local segments served from their copies instead, so far. */
    public long localFallbacks() {
        return localFallbacks.sum();
    }

    /** Record bytes returned from the store so far. */
    public long remoteRecordBytes() {
        return remoteRecordBytes.sum();
    }

    /** The manifest as it is on disk now (re-read when the file changed). */
    private Manifest manifest() throws IOException, CorruptionException {
        Path file = ManifestStore.fileIn(shardDir);
        FileTime time;
        long size;
        try {
            time = Files.getLastModifiedTime(file);
            size = Files.size(file);
        } catch (NoSuchFileException e) {
            return Manifest.empty();
        }
        if (manifest == null || !time.equals(manifestTime) || size != manifestSize) {
            // whatever was learnt of the objects the old manifest named may describe another history now
            if (manifest != null) {
                remoteIndexes.forget(manifest.entries().stream().map(ObjectIdentity::of).toList());
            }
            headers.invalidateAll();
            checked.invalidateAll();
            resumePoints.invalidateAll();
            manifest = ManifestStore.read(shardDir);
            manifestTime = time;
            manifestSize = size;
        }
        return manifest;
    }

    /**
     * Where the shard's log stands now. Each is empty when nothing holds a record.
     *
     * @param logStart  the oldest offset held anywhere: the oldest manifest entry's, else the local base
     * @param localBase the oldest offset held on local disk
     * @param logEnd    one past the newest whole record (local, else the newest copy's last plus one)
     */
    public record Bounds(OptionalLong logStart, OptionalLong localBase, OptionalLong logEnd) {
    }

    public Bounds bounds() throws IOException, CorruptionException {
        OptionalLong localFirst = local.firstOffset();
        OptionalLong localEnd = local.endOffset();
        Manifest m = manifest();
        OptionalLong start = localFirst;
        if (m.oldestEntry().isPresent() && (start.isEmpty()
                || Long.compareUnsigned(m.oldestEntry().get().baseOffset(), start.getAsLong()) < 0)) {
            start = OptionalLong.of(m.oldestEntry().get().baseOffset());
        }
        OptionalLong endOffset = localEnd;
        if (m.newestEntry().isPresent() && (endOffset.isEmpty()
                || Long.compareUnsigned(m.newestEntry().get().lastOffset() + 1, endOffset.getAsLong()) > 0)) {
            endOffset = OptionalLong.of(m.newestEntry().get().lastOffset() + 1);
        }
        return new Bounds(start, localFirst, endOffset);
    }

    /**
     * Up to {@code maxRecords} records from {@code offset}, within {@code maxBytes} of encoded records
     * unless the first alone is larger.
     */
    public TieredRead read(long offset, int maxRecords, long maxBytes)
            throws IOException, CorruptionException, StoreException {
        if (maxRecords <= 0) {
            throw new IllegalArgumentException("maxRecords must be positive, got " + maxRecords);
        }
        Budget budget = new Budget(maxRecords, maxBytes);
        long want = offset;
        // Segments move from local to remote while we read; a few rounds settle any such race.
        for (int round = 0; round < 8 && !budget.full(); round++) {
            OptionalLong localFirst = local.firstOffset();
            if (localFirst.isPresent() && Long.compareUnsigned(want, localFirst.getAsLong()) >= 0) {
                ReadResult r;
                try {
                    r = local.read(want, budget.recordsLeft(), budget.bytesLeft());
                } catch (CorruptionException damaged) {
                    // A sealed segment rotted on disk after its copy was proven: the copy is the good one.
                    ManifestLookup lookup = manifest().find(want);
                    if (lookup.kind() != ManifestLookup.Kind.ENTRY) {
                        throw damaged;
                    }
                    ManifestEntry entry = lookup.entry();
                    LOG.warn("{}: local segment {} is damaged ({}); serving offsets {}..{} from its verified copy {}",
                            shard, Long.toUnsignedString(entry.segmentId()), damaged.getMessage(),
                            Long.toUnsignedString(want), Long.toUnsignedString(entry.lastOffset()), entry.objectKey());
                    localFallbacks.increment();
                    want = readRemote(entry, want, budget);
                    continue;
                }
                if (r instanceof ReadResult.Records records) {
                    for (Record rec : records.records()) {
                        budget.take(rec, false);
                    }
                    return budget.result(records.nextOffset());
                }
                continue; // trimmed under us: the segment just went remote
            }
            ManifestLookup lookup = manifest().find(want);
            switch (lookup.kind()) {
                case ENTRY -> {
                    want = readRemote(lookup.entry(), want, budget);
                    continue;
                }
                case BELOW -> {
                    return budget.isEmpty() ? new TieredRead.Trimmed(lookup.entry().baseOffset()) : budget.result(want);
                }
                case GAP -> {
                    // Between two copies: the history goes on after it, so this is a hole, not the start.
                    long next = lookup.entry().baseOffset();
                    return budget.isEmpty() ? new TieredRead.Gap(want, next - 1, next) : budget.result(want);
                }
                case ABOVE -> {
                    if (localFirst.isPresent() && Long.compareUnsigned(want, localFirst.getAsLong()) < 0) {
                        // Between the newest copy and the local base: nothing holds these offsets. Below the
                        // local log with no copy at all, the history simply starts there.
                        long next = localFirst.getAsLong();
                        if (!budget.isEmpty()) {
                            return budget.result(want);
                        }
                        return manifest().isEmpty() ? new TieredRead.Trimmed(next) : new TieredRead.Gap(want, next - 1, next);
                    }
                    return budget.result(want);
                }
                default -> throw new IllegalStateException(lookup.kind().toString());
            }
        }
        return budget.result(want);
    }

    /** What a read may still take. */
    private static final class Budget {
        final int maxRecords;
        final long maxBytes;
        final List<TieredRead.SourcedRecord> records = new ArrayList<>();
        long bytes;

        Budget(int maxRecords, long maxBytes) {
            this.maxRecords = maxRecords;
            this.maxBytes = maxBytes;
        }

        boolean fits(int length) {
            return records.isEmpty() || bytes + length <= maxBytes;
        }

        void take(Record r, boolean remote) {
            records.add(new TieredRead.SourcedRecord(r, remote));
            bytes += r.encodedLength();
        }

        boolean full() {
            return records.size() >= maxRecords || bytes >= maxBytes;
        }

        boolean isEmpty() {
            return records.isEmpty();
        }

        int recordsLeft() {
            return Math.max(1, maxRecords - records.size());
        }

        long bytesLeft() {
            return records.isEmpty() ? maxBytes : Math.max(0, maxBytes - bytes);
        }

        TieredRead.Records result(long fallbackNext) {
            long next = records.isEmpty() ? fallbackNext : records.get(records.size() - 1).record().offset() + 1;
            return new TieredRead.Records(records, next);
        }
    }

    /**
     * Reads {@code entry}'s object from {@code want} into the budget; answers the next offset wanted
     * (one past the entry's last offset when the whole rest of it was taken).
     */
    private long readRemote(ManifestEntry entry, long want, Budget budget)
            throws IOException, StoreException, CorruptionException {
        remoteReads.increment();
        ObjectIdentity object = ObjectIdentity.of(entry);
        String key = entry.objectKey();
        CorruptionSite site = CorruptionSite.inFile(shard, key, 0);
        IndexedScan.Entry start;
        IndexedScan.Entry resume = resumePoints.getIfPresent(object);
        if (want == entry.baseOffset()) {
            start = IndexedScan.Entry.NONE; // the first record: no index is needed to find it
        } else if (resume != null && resume.offset() == want) {
            start = resume; // where the previous read of this object stopped
        } else {
            start = remoteIndexes.indexedStart(object, entry, want);
        }
        long startAt = start == IndexedScan.Entry.NONE ? SegmentHeader.LENGTH : start.position();
        boolean fromResume = start == resume && resume != null;
        if (fromResume) {
            chunks.continuing(object);
        } else if (want != entry.baseOffset()) {
            chunks.jumpedTo(object, startAt); // a random read: its chunks alone, nothing ahead
        }
        if (budget.maxRecords > 1) {
            // A reader asking for more than a chunk is read ahead from its first chunk on (before the
            // header, which may come from that chunk).
            chunks.expect(object, startAt, budget.bytesLeft());
        }
        checkObject(object, site);
        SegmentHeader header = headerOf(object, site, startAt);
        if (header.baseOffset() != entry.baseOffset()) {
            throw CorruptionException.of(CorruptionKind.OFFSET_OUT_OF_ORDER, site.at(SegmentHeader.BASE_OFFSET_OFFSET),
                    "object begins at offset " + Long.toUnsignedString(header.baseOffset()) + ", its manifest entry at "
                            + Long.toUnsignedString(entry.baseOffset()));
        }
        ObjectSink sink = new ObjectSink(entry, object, budget);
        try {
            IndexedScan.Outcome outcome = IndexedScan.read(
                    () -> SegmentScanner.over(new ObjectSegmentSource(shard, object, store, chunks, site), site, header),
                    start, want, sink, (bad, why) -> {
                        LOG.warn("{}: {} of {} points at no valid record at byte {}; scanning from the start", shard,
                                fromResume ? "the last read's stop point" : "the index", key, bad.position());
                        if (!fromResume) {
                            remoteIndexes.unusable(object, entry);
                        }
                        resumePoints.invalidate(object);
                    });
            if (outcome.stopped() && sink.lastEnd > 0) {
                resumePoints.put(object, new IndexedScan.Entry(outcome.nextOffset(), sink.lastEnd));
            }
            return outcome.stopped() ? outcome.nextOffset() : entry.lastOffset() + 1;
        } catch (ObjectSegmentSource.StoreFailure failure) {
            throw failure.storeCause();
        }
    }

    /** Takes one object's records into the read's budget, and hands a sequential reader on. */
    private final class ObjectSink implements IndexedScan.Sink {
        private final ManifestEntry entry;
        private final ObjectIdentity object;
        private final Budget budget;
        private final long lastChunkStart;
        private boolean handedOn;
        /** Where the last record taken ends; 0 before any. */
        long lastEnd;

        ObjectSink(ManifestEntry entry, ObjectIdentity object, Budget budget) {
            this.entry = entry;
            this.object = object;
            this.budget = budget;
            long size = object.size();
            this.lastChunkStart = size == 0 ? 0 : (size - 1) / chunks.chunkBytes() * chunks.chunkBytes();
        }

        @Override
        public boolean full() {
            return budget.full();
        }

        @Override
        public boolean fits(RecordHeader h) {
            return budget.fits(h.totalLength());
        }

        @Override
        public void take(Record record, long end) {
            budget.take(record, true);
            lastEnd = end;
            remoteRecordBytes.add(record.encodedLength());
            if (!handedOn && end >= lastChunkStart && chunks.sequential(object)) {
                handedOn = true;
                // The next copy's first chunks are in flight before the reader gets there.
                nextObject(entry).ifPresent(chunks::continueInto);
            }
        }
    }

    /** The copy that holds the offsets right after {@code entry}'s, when the manifest has one. */
    private java.util.Optional<ObjectIdentity> nextObject(ManifestEntry entry) {
        Manifest m = manifest;
        if (m == null || entry.lastOffset() == -1L) {
            return java.util.Optional.empty();
        }
        ManifestLookup next = m.find(entry.lastOffset() + 1);
        return next.kind() == ManifestLookup.Kind.ENTRY ? java.util.Optional.of(ObjectIdentity.of(next.entry()))
                : java.util.Optional.empty();
    }

    /**
     * Makes sure the object at the entry's key is the one the entry names, once per object: a small
     * one ({@link ChunkCache#smallObjectBytes}: one chunk, or up to 4 MiB in the readers' cache, which
     * a read of it mostly fetches anyway) by the CRC-32 of all its bytes, fetched in one GET and once
     * more before a mismatch counts; a larger one by one HEAD, whose size must be the
     * entry's and whose CRC-32, where the store keeps one, the entry's. An object shorter than its
     * entry is {@link CorruptionKind#TRUNCATED} as it always was; any other mismatch is
     * {@link CorruptionKind#OBJECT_MISMATCH} naming the key and both values: the store holds another
     * history at that key (a copy of this data root offloading under its node id, a stream deleted and
     * created again), whose records would each pass their own checksums, so none is served. Where the
     * store keeps no CRC-32 (S3Proxy, Ceph RGW), a large object's size is all a HEAD can check, and
     * {@code scrub} reads it whole.
     */
    private void checkObject(ObjectIdentity object, CorruptionSite site) throws StoreException, CorruptionException {
        if (checked.getIfPresent(object) != null || object.size() == 0) {
            return;
        }
        String key = object.key();
        if (object.size() <= chunks.smallObjectBytes()) {
            int size = (int) object.size();
            long crc = crcOf(wholeChunk(object, size));
            if (crc != object.crc32()) {
                LOG.warn("{}: {} holds bytes of CRC-32 {} where its entry records {}; fetching it again", shard, key,
                        String.format("%08x", crc), String.format("%08x", object.crc32()));
                chunks.invalidate(object, 0, size);
                crc = crcOf(wholeChunk(object, size));
            }
            if (crc != object.crc32()) {
                throw CorruptionException.of(CorruptionKind.OBJECT_MISMATCH, site.at(0), "the store holds other bytes "
                        + "at " + key + " than its manifest entry names: CRC-32 " + String.format("%08x", crc)
                        + " over its " + size + " bytes, the entry records " + String.format("%08x", object.crc32())
                        + "; none of its records is served");
            }
        } else {
            ObjectHead head = store.head(key);
            if (head.size() < object.size()) {
                throw shorter(object, head.size());
            }
            if (head.size() != object.size()) {
                throw CorruptionException.of(CorruptionKind.OBJECT_MISMATCH, site.at(0), "the store holds "
                        + head.size() + " bytes at " + key + ", its manifest entry names an object of " + object.size()
                        + "; none of its records is served");
            }
            if (head.crc32().isPresent() && head.crc32().getAsLong() != object.crc32()) {
                throw CorruptionException.of(CorruptionKind.OBJECT_MISMATCH, site.at(0), "the store keeps CRC-32 "
                        + String.format("%08x", head.crc32().getAsLong()) + " for " + key + ", its manifest entry "
                        + "records " + String.format("%08x", object.crc32()) + "; none of its records is served");
            }
        }
        checked.put(object, Boolean.TRUE);
    }

    private ByteBuffer wholeChunk(ObjectIdentity object, int size) throws StoreException, CorruptionException {
        try {
            if (size > chunks.chunkBytes()) {
                chunks.prefetch(object, 0, size); // the chunks it lacks in one GET, not one GET a chunk
            }
            return chunks.view(object, 0, size);
        } catch (InvalidRangeException shorter) {
            throw shorter(object, store.head(object.key()).size());
        }
    }

    /**
     * An object shorter than its entry records: a truncation of the copy (or another, shorter object),
     * reported as reads of a short copy always were, naming both sizes, before any record is served.
     */
    private CorruptionException shorter(ObjectIdentity object, long actual) {
        return CorruptionException.truncated(CorruptionSite.inFile(shard, object.key(), 0), "object (" + actual
                + " bytes stored, " + object.size() + " recorded by its manifest entry)", object.size(), actual);
    }

    private static long crcOf(ByteBuffer bytes) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes.duplicate());
        return crc.getValue();
    }

    /**
     * The object's segment header, kept once read. When the scan starts in the object's first chunk,
     * which it is about to fetch anyway (a sequential reader has it under way already), the header
     * comes from that chunk; otherwise by a ranged GET of its 32 bytes, not a whole chunk. Either is
     * read once more if it does not decode (the chunk dropped first).
     */
    private SegmentHeader headerOf(ObjectIdentity object, CorruptionSite site, long scanStart)
            throws StoreException, CorruptionException {
        SegmentHeader cached = headers.getIfPresent(object);
        if (cached != null) {
            return cached;
        }
        String key = object.key();
        int length = (int) Math.min(SegmentHeader.LENGTH, object.size());
        boolean fromChunk = scanStart < chunks.chunkBytes();
        SegmentHeader header;
        try {
            header = SegmentHeader.decode(headerBytes(object, length, fromChunk), site);
        } catch (CorruptionException first) {
            if (fromChunk) {
                chunks.invalidate(object, 0, length);
            }
            header = SegmentHeader.decode(headerBytes(object, length, fromChunk), site);
        }
        headers.put(object, header);
        return header;
    }

    private ByteBuffer headerBytes(ObjectIdentity object, int length, boolean fromChunk) throws StoreException {
        if (fromChunk) {
            try {
                return chunks.view(object, 0, length);
            } catch (InvalidRangeException shorter) {
                // the object is shorter than its entry says: the scan reports that as damage, naming the byte
            }
        }
        return ByteBuffer.wrap(store.readRange(object.key(), ByteRange.of(0, length)));
    }
}
