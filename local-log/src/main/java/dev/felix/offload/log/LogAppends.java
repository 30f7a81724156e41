package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.log.side.DerivedLoad;
import dev.felix.offload.log.side.EpochHistory;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ProducerSnapshot;
import dev.felix.offload.log.side.ProducersFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ShardLog}'s appends and what they derive: the producer state that keeps an idempotent
 * producer's batch from being written twice, and the generation history. Both are derived files
 * ({@code producers}, saved at each roll; {@code epochs}, at each generation start), saved without a
 * flush, ignored when damaged and rebuilt from the log's marks. Whether appended bytes still wait
 * for a sync is kept here too. The caller holds the log's write lock.
 */
final class LogAppends {

    private static final Logger LOG = LoggerFactory.getLogger(ShardLog.class);

    private final Path dir;
    private final String shard;
    private final ShardLogConfig config;
    private final LogStructure structure;
    private final ProducerState producers = new ProducerState();
    private EpochHistory epochs;
    private boolean unsynced;

    LogAppends(Path dir, ShardLogConfig config, LogStructure structure, EpochHistory epochs) {
        this.dir = dir;
        this.shard = DataRoot.Shard.nameOf(dir);
        this.config = config;
        this.structure = structure;
        this.epochs = epochs;
    }

    /** Producer state: the snapshot when it describes this log, then the marks after it; else the whole log. */
    void loadProducers() throws IOException, CorruptionException {
        LogView v = structure.view();
        long first = v.firstOffset();
        long next = v.active().nextOffset();
        DerivedLoad<ProducerSnapshot> snapshot = ProducersFile.load(dir, first, next);
        long replayFrom = first;
        if (snapshot.value().isPresent()) {
            producers.replaceWith(ProducerState.of(snapshot.value().get()));
            replayFrom = snapshot.value().get().asOf();
        } else if (snapshot.problem().isPresent()) {
            LOG.info("{}: producer snapshot ignored ({}); rebuilding from the log", shard,
                    snapshot.problem().get().getMessage());
        }
        replayMarks(replayFrom);
    }

    /** Feeds the record headers from {@code from} to the end of the log to the producer state. */
    private void replayMarks(long from) throws IOException, CorruptionException {
        LogView v = structure.view();
        int segments = v.sealed().size() + 1;
        for (int i = v.locate(from); i < segments; i++) {
            boolean isActive = i == v.sealed().size();
            SegmentFile file = isActive ? v.active().file() : v.sealed().get(i).file();
            long end = isActive ? v.active().size() : v.sealed().get(i).size();
            try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), ScanDepth.HEADERS, end)) {
                RecordHeader h;
                while ((h = scanner.nextHeader()) != null) {
                    if (Long.compareUnsigned(h.offset(), from) >= 0) {
                        producers.observe(h.kind(), h.offset(), h.tag());
                    }
                }
            }
        }
    }

    /** See {@link ShardLog#append}. */
    long append(long timestampMicros, byte[] payload) throws IOException {
        return appendRecords(SegmentHeader.VERSION_2, first -> List.of(Record.plain(first, timestampMicros, payload)));
    }

    /** See {@link ShardLog#appendBatch}. */
    long appendBatch(long producerId, long sequence, long timestampMicros, List<byte[]> payloads) throws IOException {
        if (payloads.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        BatchTag tag = new BatchTag(producerId, sequence, payloads.size());
        OptionalLong held = producers.heldBatch(producerId, sequence, this::sequenceAt);
        if (held.isPresent()) {
            long heldLength = producers.batchLength(producerId, held.getAsLong());
            if (heldLength != payloads.size()) {
                throw new IllegalArgumentException("producer " + Long.toUnsignedString(producerId) + " sequence "
                        + Long.toUnsignedString(sequence) + " is held as a batch of " + heldLength
                        + " records; this one has " + payloads.size());
            }
            return held.getAsLong(); // a retry: the original offsets answer it and nothing is written
        }
        return appendRecords(SegmentHeader.VERSION_3, first -> {
            List<Record> records = new ArrayList<>(payloads.size());
            records.add(Record.batchOpen(first, timestampMicros, tag, payloads.get(0)));
            for (int i = 1; i < payloads.size(); i++) {
                records.add(Record.batchContinue(first + i, timestampMicros, payloads.get(i)));
            }
            return records;
        });
    }

    /** Refuses a generation-start record until the fleet finalized them; see {@link ShardLog#appendGenerationStart}. */
    void requireGenerationStart() {
        if (!config.generationStartFinalized()) {
            throw new IllegalStateException("generation-start records are not finalized for this fleet; "
                    + "writing one would make the shard unreadable to builds before segment v4");
        }
    }

    /** See {@link ShardLog#appendGenerationStart}. */
    long appendGenerationStart(long generation, long timestampMicros) throws IOException {
        requireGenerationStart();
        long offset = appendRecords(SegmentHeader.VERSION_4, first -> List.of(Record.generationStart(first,
                timestampMicros, generation)));
        epochs = epochs.append(generation, offset);
        saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
        return offset;
    }

    /** The sequence in the batch-open record at {@code offset}, for the producer state's look-ups. */
    private long sequenceAt(long offset) throws IOException {
        try {
            ReadResult r = structure.read(offset, 1, 1);
            if (r instanceof ReadResult.Records records && !records.records().isEmpty()
                    && records.records().get(0).tag() != null) {
                return records.records().get(0).tag().sequence();
            }
            return -1;
        } catch (CorruptionException e) {
            throw new IOException("reading the batch at offset " + Long.toUnsignedString(offset) + ": " + e.getMessage(), e);
        }
    }

    private interface RecordsAt {
        List<Record> at(long firstOffset);
    }

    private long appendRecords(int requiredVersion, RecordsAt build) throws IOException {
        // Built (and so size-checked) before anything is written: an oversized payload throws here.
        List<Record> records = build.at(structure.view().active().nextOffset());
        long bytes = 0;
        for (Record r : records) {
            bytes += r.encodedLength();
        }
        SegmentWriter active = structure.view().active();
        if (active.header().version() < requiredVersion
                || (!active.isEmpty() && active.size() + bytes > config.segmentSizeBytes())) {
            active = roll(requiredVersion);
        }
        if (active.nextOffset() != records.get(0).offset()) {
            records = build.at(active.nextOffset());
        }
        active.appendAll(records);
        for (Record r : records) {
            producers.observe(r.kind(), r.offset(), r.tag());
        }
        if (config.fsyncPolicy() instanceof FsyncPolicy.OnCommit) {
            active.sync();
        } else {
            unsynced = true;
        }
        return records.get(0).offset();
    }

    /** Rolls; a sealed segment was synced by sealing, and the snapshot describes the log up to the new one. */
    private SegmentWriter roll(int requiredVersion) throws IOException {
        if (structure.roll(requiredVersion)) {
            unsynced = false;
            SegmentWriter fresh = structure.view().active();
            ProducerSnapshot snapshot = producers.snapshot(fresh.header().baseOffset());
            saveDerived(() -> ProducersFile.FILE.save(dir, snapshot), "the producer snapshot");
            return fresh;
        }
        return structure.view().active();
    }

    /** Whether appended bytes wait for a sync. */
    boolean unsynced() {
        return unsynced;
    }

    void synced() {
        unsynced = false;
    }

    EpochHistory epochs() {
        return epochs;
    }

    /**
     * Before a cut at {@code offset}: the snapshot would describe records about to be replaced, so
     * it goes, durably, before any change; the generation history is cut there too.
     */
    void forgetFrom(long offset) throws IOException {
        ProducersFile.FILE.remove(dir);
        epochs = epochs.truncatedAt(offset);
        saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
    }

    /** After a cut: the producer state as the records left say it is. */
    void rebuildProducers() throws IOException {
        producers.replaceWith(new ProducerState());
        try {
            replayMarks(structure.view().firstOffset());
        } catch (CorruptionException e) {
            throw new IOException("rebuilding producer state after truncation: " + e.getMessage(), e);
        }
    }

    /** Before a reset: no producer and no generation is known any more. */
    void forgetAll() throws IOException {
        ProducersFile.FILE.remove(dir);
        producers.replaceWith(new ProducerState());
        epochs = EpochHistory.empty();
        saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
    }

    /** After old segments were deleted: batches wholly below the new first offset are forgotten. */
    void forgetBelow(long firstOffset) {
        producers.forgetBelow(firstOffset);
    }

    private interface DerivedWrite {
        void run() throws IOException;
    }

    /** A derived file's write: a failure costs a longer open later, never a record, so it is only logged. */
    private void saveDerived(DerivedWrite write, String what) {
        try {
            write.run();
        } catch (IOException e) {
            LOG.warn("{}: could not save {} ({}); it is rebuilt from the log when needed", shard, what, e.toString());
        }
    }
}
