package dev.felix.offload.copy;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The largest record timestamp of each offloaded segment, kept beside the manifest in
 * {@value #FILE_NAME}. Time retention judges a segment by it; the manifest's {@code newest} field is
 * the last record's timestamp (the spec), which a clock that stepped back leaves older than earlier
 * records.
 *
 * <p>The file is derived, never authoritative: a line counts only for the entry whose object key and
 * CRC32 it names (a replaced history under the same keys has other CRC32s), a missing, unreadable or
 * stale line is rebuilt from the object's records, and the file may be lost at any time. One line per
 * segment: {@code <object crc32 hex> <largest timestamp micros, unsigned> <object key>}.
 */
public final class LargestTimestamps {

    private static final Logger LOG = LoggerFactory.getLogger(LargestTimestamps.class);

    public static final String FILE_NAME = "offload.timestamps";
    private static final String FIRST_LINE = "felix-offload largest timestamps v1";

    private final Path shardDir;
    private final Map<String, long[]> byKey; // key -> {crc32, largest}
    /** The file's text as loaded or last saved; null when there was none (or it could not be read). */
    private String loaded;

    private LargestTimestamps(Path shardDir, Map<String, long[]> byKey, String loaded) {
        this.shardDir = shardDir;
        this.byKey = byKey;
        this.loaded = loaded;
    }

    /** What the shard's file holds; an absent or unreadable file holds nothing (it is rebuilt). */
    public static LargestTimestamps load(Path shardDir) {
        Map<String, long[]> out = new HashMap<>();
        Path file = shardDir.resolve(FILE_NAME);
        String text = null;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
            String[] lines = text.split("\n");
            if (lines.length == 0 || !lines[0].equals(FIRST_LINE)) {
                LOG.warn("{}: not a largest-timestamps file; rebuilt from the objects", file);
                return new LargestTimestamps(shardDir, out, null);
            }
            for (int i = 1; i < lines.length; i++) {
                String[] parts = lines[i].split(" ", 3);
                if (parts.length != 3) {
                    continue;
                }
                try {
                    out.put(parts[2], new long[] {Long.parseLong(parts[0], 16), Long.parseUnsignedLong(parts[1])});
                } catch (NumberFormatException bad) {
                    // a damaged line only costs its rebuild
                }
            }
        } catch (NoSuchFileException absent) {
            // nothing yet
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: unreadable ({}); rebuilt from the objects", file, e.toString());
            text = null;
        }
        return new LargestTimestamps(shardDir, out, text);
    }

    /** The largest timestamp recorded for {@code entry}, when a line names its key and CRC32. */
    public OptionalLong of(ManifestEntry entry) {
        long[] v = byKey.get(entry.objectKey());
        if (v == null || v[0] != Integer.toUnsignedLong(entry.objectCrc32())) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(v[1]);
    }

    /** Records {@code largest} for {@code entry} (in memory; {@link #save} writes it). */
    public void put(ManifestEntry entry, long largest) {
        byKey.put(entry.objectKey(), new long[] {Integer.toUnsignedLong(entry.objectCrc32()), largest});
    }

    /**
     * The largest timestamp of {@code entry}: from the file, else from the object's record headers
     * (downloaded beside the manifest, checked against the entry's CRC32, scanned, deleted), which is
     * then remembered.
     */
    public long ofOrRebuild(ManifestEntry entry, String shard, ObjectFetcher store)
            throws IOException, StoreException, CorruptionException {
        OptionalLong known = of(entry);
        if (known.isPresent()) {
            return known.getAsLong();
        }
        Path temp = shardDir.resolve("." + FILE_NAME + ".object" + DurableFiles.TEMP_SUFFIX);
        try {
            store.download(entry.objectKey(), temp, OptionalLong.of(Integer.toUnsignedLong(entry.objectCrc32())));
            SegmentScan scan = SegmentScan.of(temp, shard, entry.segmentId(), ScanDepth.HEADERS);
            if (!scan.isClean()) {
                throw scan.failure();
            }
            put(entry, scan.largestTimestamp());
            LOG.info("{}: largest timestamp of segment {} rebuilt from {}", shard,
                    Long.toUnsignedString(entry.segmentId()), entry.objectKey());
            return scan.largestTimestamp();
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * Writes the lines of {@code entries} (the others are dropped), whole or not at all; nothing when
     * the file holds them already as loaded.
     */
    public void save(Collection<ManifestEntry> entries) throws IOException {
        StringBuilder text = new StringBuilder(FIRST_LINE).append('\n');
        for (ManifestEntry e : entries) {
            OptionalLong v = of(e);
            if (v.isPresent()) {
                text.append(Long.toHexString(Integer.toUnsignedLong(e.objectCrc32()))).append(' ')
                        .append(Long.toUnsignedString(v.getAsLong())).append(' ').append(e.objectKey()).append('\n');
            }
        }
        if (text.toString().equals(loaded)) {
            // Unchanged (every retention pass of a quiet shard): a replace would change the directory's
            // time, and with it every shard would look changed to the passes' and the survey's memos.
            return;
        }
        // Derived data: whole or absent after a crash is enough, so no fsync.
        String saved = text.toString();
        DurableFiles.replace(shardDir.resolve(FILE_NAME), saved.getBytes(StandardCharsets.UTF_8),
                DurableFiles.Sync.NONE);
        loaded = saved;
    }
}
