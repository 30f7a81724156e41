package dev.felix.offload.manifest;

import dev.felix.offload.log.DurableFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * Which manifest entries' copies were proven, kept in {@value #FILE_NAME} beside the manifest.
 *
 * <p>The manifest's layout is fixed by the spec and has no room to say that an entry was recorded
 * without proof ({@code --verify none}), so this derived file says the opposite: which entries
 * were proven, and how. It is not authoritative: an entry it does not name (the file lost, damaged,
 * or from a build that predates it) is only re-proven before its local segment is unlinked, never
 * taken on trust. A line names the entry in full (segment id, base offset, size, CRC32, key), so a
 * line left over from an entry the broker dropped proves nothing for a different one.
 *
 * <p>Each line also says when the proof was written ({@link #since}): a proof is written after the
 * manifest save that recorded its entry, and written anew each time the entry is recorded again, so
 * it is a time at or after the entry last became durable. A local segment is released only once its
 * entry has stood that long and is read back from disk (see {@code dev.felix.offload.copy.LocalRelease}),
 * which is what keeps a broker's rewrite of the manifest, begun before the entry was recorded, from
 * erasing the only record of a segment that is already gone.
 *
 * <p>Only offload and retention write it, under the root's lock; the broker never does. It is
 * written through a temporary and an atomic move, and the whole text carries a CRC32 so that a torn
 * or edited file reads as empty.
 *
 * <pre>
 *   felix-offload copy proofs v2
 *   &lt;segment id&gt; &lt;base offset&gt; &lt;size&gt; &lt;crc32, 8 hex&gt; &lt;how&gt; &lt;written at, epoch ms&gt; &lt;key&gt;
 *   ...
 *   crc32 &lt;8 hex, over every byte before this line&gt;
 * </pre>
 * A v1 file (lines without the time) is still read: its proofs count as written when the file was
 * last modified, which is no earlier than any of them.
 */
public final class CopyProofs {

    private static final Logger LOG = LoggerFactory.getLogger(CopyProofs.class);

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "offload.proofs";

    private static final String HEADER = "felix-offload copy proofs v2";
    private static final String HEADER_V1 = "felix-offload copy proofs v1";
    private static final String CRC_PREFIX = "crc32 ";
    /** Eight lowercase hex digits, as {@code %08x} wrote them; a formatter per line was most of a write's time. */
    private static final java.util.HexFormat HEX = java.util.HexFormat.of();

    /** One proven copy: what the entry records, how it was proven, and when that was written (epoch ms). */
    public record Proof(long segmentId, long baseOffset, long sizeBytes, int crc32, String key, String how,
                        long sinceMillis) {

        /** True when this proof is for exactly {@code e}. */
        public boolean covers(ManifestEntry e) {
            return e.segmentId() == segmentId && e.baseOffset() == baseOffset && e.sizeBytes() == sizeBytes
                    && e.objectCrc32() == crc32 && e.objectKey().equals(key);
        }

        static Proof of(ManifestEntry e, String how, long sinceMillis) {
            return new Proof(e.segmentId(), e.baseOffset(), e.sizeBytes(), e.objectCrc32(), e.objectKey(), how,
                    sinceMillis);
        }
    }

    private final Path file;
    private final Map<String, Proof> byKey;
    private final java.time.Clock clock;

    private CopyProofs(Path file, Map<String, Proof> byKey, java.time.Clock clock) {
        this.file = file;
        this.byKey = byKey;
        this.clock = clock;
    }

    /** Reads the proofs of {@code shardDir}; a missing, torn or damaged file reads as none (they are re-proven). */
    public static CopyProofs read(Path shardDir) throws IOException {
        return read(shardDir, java.time.Clock.systemUTC());
    }

    /** As {@link #read(Path)}, with {@code clock} telling the time new proofs are written at. */
    public static CopyProofs read(Path shardDir, java.time.Clock clock) throws IOException {
        Path file = shardDir.resolve(FILE_NAME);
        Map<String, Proof> proofs = new LinkedHashMap<>();
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return new CopyProofs(file, proofs, clock);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int lastLine = text.lastIndexOf(CRC_PREFIX);
        boolean v1 = text.startsWith(HEADER_V1 + "\n");
        if (lastLine < 0 || !text.startsWith(HEADER + "\n") && !v1) {
            LOG.warn("{}: not a proofs file; its entries will be proven again before any local segment goes", file);
            return new CopyProofs(file, proofs, clock);
        }
        String body = text.substring(0, lastLine);
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        if (!text.substring(lastLine).trim().equals(CRC_PREFIX + HEX.toHexDigits((int) crc.getValue()))) {
            LOG.warn("{}: damaged (checksum differs); its entries will be proven again before any local segment goes",
                    file);
            return new CopyProofs(file, proofs, clock);
        }
        // A v1 line carries no time: the file's own modification time is no earlier than any line's.
        long v1Since = v1 ? Files.getLastModifiedTime(file).toMillis() : -1;
        int fields = v1 ? 6 : 7;
        for (String line : body.split("\n")) {
            if (line.isEmpty() || line.equals(HEADER) || line.equals(HEADER_V1)) {
                continue;
            }
            String[] f = line.split(" ", fields);
            if (f.length != fields) {
                LOG.warn("{}: damaged line, proofs ignored", file);
                return new CopyProofs(file, new LinkedHashMap<>(), clock);
            }
            try {
                long since = v1 ? v1Since : Long.parseLong(f[5]);
                Proof p = new Proof(Long.parseUnsignedLong(f[0]), Long.parseUnsignedLong(f[1]),
                        Long.parseLong(f[2]), (int) Long.parseLong(f[3], 16), f[fields - 1], f[4], since);
                proofs.put(p.key(), p);
            } catch (NumberFormatException e) {
                LOG.warn("{}: damaged line, proofs ignored", file);
                return new CopyProofs(file, new LinkedHashMap<>(), clock);
            }
        }
        return new CopyProofs(file, proofs, clock);
    }

    /** True when the copy {@code e} names was proven. */
    public boolean proven(ManifestEntry e) {
        Proof p = byKey.get(e.objectKey());
        return p != null && p.covers(e);
    }

    /**
     * When the proof of {@code e}'s copy was written (epoch milliseconds), which is no earlier than
     * the manifest save that last recorded {@code e}; empty when the copy is not proven.
     */
    public java.util.OptionalLong since(ManifestEntry e) {
        Proof p = byKey.get(e.objectKey());
        return p != null && p.covers(e) ? java.util.OptionalLong.of(p.sinceMillis()) : java.util.OptionalLong.empty();
    }

    /** How the copy {@code e} names was proven, or null when it was not. */
    public String how(ManifestEntry e) {
        Proof p = byKey.get(e.objectKey());
        return p != null && p.covers(e) ? p.how() : null;
    }

    /**
     * Records that {@code e}'s copy was proven by {@code how}, now, keeping only proofs of entries
     * {@code manifest} still holds. Not flushed: a proof lost to a crash is only proven again (and
     * its time is then later, never earlier).
     */
    public synchronized void prove(ManifestEntry e, String how, Manifest manifest) throws IOException {
        prove(Map.of(e, how), manifest);
    }

    /**
     * {@link #prove(ManifestEntry, String, Manifest)} for several entries, in one write of the file. An
     * entry already proven keeps the time of its first proof: proving a copy again does not make its
     * entry any younger.
     */
    public synchronized void prove(Map<ManifestEntry, String> how, Manifest manifest) throws IOException {
        long now = clock.millis();
        how.forEach((e, h) -> {
            Proof before = byKey.get(e.objectKey());
            long since = before != null && before.covers(e) ? before.sinceMillis() : now;
            byKey.put(e.objectKey(), Proof.of(e, h, since));
        });
        write(manifest, DurableFiles.Sync.NONE);
    }

    /**
     * Proofs of entries the caller has just recorded (saved in the manifest): each counts from now,
     * whatever an older line said, since the entry became durable only now.
     */
    public synchronized void recorded(Map<ManifestEntry, String> how, Manifest manifest) throws IOException {
        long now = clock.millis();
        how.forEach((e, h) -> byKey.put(e.objectKey(), Proof.of(e, h, now)));
        write(manifest, DurableFiles.Sync.NONE);
    }

    /**
     * Forgets any proof for {@code key} (an entry about to be recorded without proof), durably, so
     * that no older file with a proof for the same key comes back after a crash.
     */
    public synchronized void forget(String key, Manifest manifest) throws IOException {
        if (byKey.remove(key) != null) {
            write(manifest, DurableFiles.Sync.FULL);
        }
    }

    private void write(Manifest manifest, DurableFiles.Sync sync) throws IOException {
        Map<String, ManifestEntry> named = new HashMap<>();
        for (ManifestEntry e : manifest.entries()) {
            named.put(e.objectKey(), e);
        }
        List<Proof> kept = new ArrayList<>();
        for (Proof p : byKey.values()) {
            ManifestEntry e = named.get(p.key());
            if (e != null && p.covers(e)) {
                kept.add(p);
            }
        }
        StringBuilder body = new StringBuilder(HEADER).append('\n');
        for (Proof p : kept) {
            body.append(Long.toUnsignedString(p.segmentId())).append(' ')
                    .append(Long.toUnsignedString(p.baseOffset())).append(' ')
                    .append(p.sizeBytes()).append(' ')
                    .append(HEX.toHexDigits(p.crc32())).append(' ')
                    .append(p.how().replace(' ', '-')).append(' ')
                    .append(p.sinceMillis()).append(' ')
                    .append(p.key()).append('\n');
        }
        byte[] bodyBytes = body.toString().getBytes(StandardCharsets.UTF_8);
        CRC32 crc = new CRC32();
        crc.update(bodyBytes);
        String text = body + CRC_PREFIX + HEX.toHexDigits((int) crc.getValue()) + "\n";
        DurableFiles.replace(file, text.getBytes(StandardCharsets.UTF_8), sync);
    }
}
