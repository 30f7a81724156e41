package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.log.recovery.ShardInspection.Action;
import dev.felix.offload.log.recovery.ShardInspection.SegmentPlan;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What opening a {@link ShardLog} does to each segment once {@code ShardInspector} has judged it:
 * the newest reopened for appends (a blank first segment replaced, a torn tail cut, its index
 * rebuilt from the records), a sealed one's index loaded or, when missing or unusable, rebuilt.
 */
final class SegmentRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(ShardLog.class);

    private SegmentRecovery() {
    }

    static SegmentWriter reopenNewest(SegmentPlan plan, String shard, ShardLogConfig config) throws IOException {
        SegmentFile file = plan.file();
        if (plan.action() == Action.DELETE_BLANK) {
            LOG.warn("{}: deleting blank first segment {} ({} bytes): its creation failed before it held a record",
                    shard, file.logName(), plan.scan().fileSize());
            Files.deleteIfExists(file.index());
            Files.delete(file.log());
            DurableFiles.fsyncDirectory(file.log().toAbsolutePath().getParent());
            return SegmentWriter.create(file, SegmentHeader.v3(0, nowMicros()), config.indexSpacingBytes());
        }
        long validEnd = plan.scan().validEnd();
        if (plan.action() == Action.TRUNCATE_TAIL) {
            LOG.warn("{}: {}; truncating {} from {} to {} bytes", shard, plan.scan().failure().getMessage(),
                    file.logName(), plan.scan().fileSize(), validEnd);
            try (FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.WRITE)) {
                ch.truncate(validEnd);
                ch.force(true);
            }
        }
        SegmentHeader header = plan.scan().header();
        // The active segment's index may lag or run past a cut tail: always rebuild it from the records.
        SegmentIndex index = rebuildIndex(file, shard, validEnd, config.indexSpacingBytes());
        return SegmentWriter.reopen(file, header, validEnd, plan.scan().nextOffset(), index, config.indexSpacingBytes());
    }

    static SegmentIndex loadOrRebuildIndex(SegmentFile file, String shard, SegmentHeader header, long size,
                                                   ShardLogConfig config) throws IOException {
        try {
            SegmentIndex index = SegmentIndex.read(file.index(), shard, file.id());
            if (index.baseOffset() == header.baseOffset()
                    && (index.size() == 0 || index.positionAt(index.size() - 1) < size)) {
                return index;
            }
            LOG.info("{}: index {} does not match its segment; rebuilding", shard, file.indexName());
        } catch (NoSuchFileException e) {
            LOG.info("{}: index {} is missing; rebuilding", shard, file.indexName());
        } catch (CorruptionException e) {
            LOG.info("{}: index {} is unusable ({}); rebuilding", shard, file.indexName(), e.getMessage());
        }
        SegmentIndex rebuilt = rebuildIndex(file, shard, size, config.indexSpacingBytes());
        DurableFiles.replace(file.index(), rebuilt.encode(), DurableFiles.Sync.NONE);
        return rebuilt;
    }

    /** Rebuilds an index for recovery, whose scan has just checked these headers. */
    static SegmentIndex rebuildIndex(SegmentFile file, String shard, long size, int spacingBytes) throws IOException {
        try {
            return rebuildIndexOf(file, shard, size, spacingBytes);
        } catch (CorruptionException e) {
            // Recovery checked these headers moments ago; failing now means the file changed under us.
            throw new IOException("segment changed during recovery: " + e.getMessage(), e);
        }
    }

    /**
     * A segment's sparse index built from its record headers (the first {@code size} bytes), with the
     * writer's spacing rule: an entry for the first record, then one each {@code spacingBytes}.
     */
    public static SegmentIndex rebuildIndexOf(SegmentFile file, String shard, long size, int spacingBytes)
            throws IOException, CorruptionException {
        try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), ScanDepth.HEADERS, size)) {
            GrowingIndex index = new GrowingIndex(scanner.header().baseOffset(), spacingBytes);
            RecordHeader h;
            while ((h = scanner.nextHeader()) != null) {
                if (index.due(h.position())) {
                    index.add(h.offset(), h.position());
                }
            }
            return index.snapshot();
        }
    }

    static long nowMicros() {
        return Math.multiplyExact(System.currentTimeMillis(), 1000L);
    }
}
