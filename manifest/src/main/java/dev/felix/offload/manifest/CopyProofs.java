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
 * <p>Only offload and retention write it, under the root's lock; the broker never does. It is
 * written through a temporary and an atomic move, and the whole text carries a CRC32 so that a torn
 * or edited file reads as empty.
 */
public final class CopyProofs {

    private static final Logger LOG = LoggerFactory.getLogger(CopyProofs.class);

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "offload.proofs";

    private static final String HEADER = "felix-offload copy proofs v1";
    private static final String CRC_PREFIX = "crc32 ";

    /** One proven copy: what the entry records, and how it was proven. */
    public record Proof(long segmentId, long baseOffset, long sizeBytes, int crc32, String key, String how) {

        /** True when this proof is for exactly {@code e}. */
        public boolean covers(ManifestEntry e) {
            return e.segmentId() == segmentId && e.baseOffset() == baseOffset && e.sizeBytes() == sizeBytes
                    && e.objectCrc32() == crc32 && e.objectKey().equals(key);
        }

        static Proof of(ManifestEntry e, String how) {
            return new Proof(e.segmentId(), e.baseOffset(), e.sizeBytes(), e.objectCrc32(), e.objectKey(), how);
        }
    }

    private final Path file;
    private final Map<String, Proof> byKey;

    private CopyProofs(Path file, Map<String, Proof> byKey) {
        this.file = file;
        this.byKey = byKey;
    }

    /** Reads the proofs of {@code shardDir}; a missing, torn or damaged file reads as none (they are re-proven). */
    public static CopyProofs read(Path shardDir) throws IOException {
        Path file = shardDir.resolve(FILE_NAME);
        Map<String, Proof> proofs = new LinkedHashMap<>();
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return new CopyProofs(file, proofs);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int lastLine = text.lastIndexOf(CRC_PREFIX);
        if (lastLine < 0 || !text.startsWith(HEADER + "\n")) {
            LOG.warn("{}: not a proofs file; its entries will be proven again before any local segment goes", file);
            return new CopyProofs(file, proofs);
        }
        String body = text.substring(0, lastLine);
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        if (!text.substring(lastLine).trim().equals(CRC_PREFIX + String.format("%08x", crc.getValue()))) {
            LOG.warn("{}: damaged (checksum differs); its entries will be proven again before any local segment goes",
                    file);
            return new CopyProofs(file, proofs);
        }
        for (String line : body.split("\n")) {
            if (line.isEmpty() || line.equals(HEADER)) {
                continue;
            }
            String[] f = line.split(" ", 6);
            if (f.length != 6) {
                LOG.warn("{}: damaged line, proofs ignored", file);
                return new CopyProofs(file, new LinkedHashMap<>());
            }
            try {
                Proof p = new Proof(Long.parseUnsignedLong(f[0]), Long.parseUnsignedLong(f[1]),
                        Long.parseLong(f[2]), (int) Long.parseLong(f[3], 16), f[5], f[4]);
                proofs.put(p.key(), p);
            } catch (NumberFormatException e) {
                LOG.warn("{}: damaged line, proofs ignored", file);
                return new CopyProofs(file, new LinkedHashMap<>());
            }
        }
        return new CopyProofs(file, proofs);
    }

    /** True when the copy {@code e} names was proven. */
    public boolean proven(ManifestEntry e) {
        Proof p = byKey.get(e.objectKey());
        return p != null && p.covers(e);
    }

    /** How the copy {@code e} names was proven, or null when it was not. */
    public String how(ManifestEntry e) {
        Proof p = byKey.get(e.objectKey());
        return p != null && p.covers(e) ? p.how() : null;
    }

    /**
     * Records that {@code e}'s copy was proven by {@code how}, keeping only proofs of entries
     * {@code manifest} still holds. Not flushed: a proof lost to a crash is only proven again.
     */
    public synchronized void prove(ManifestEntry e, String how, Manifest manifest) throws IOException {
        prove(Map.of(e, how), manifest);
    }

    /** {@link #prove(ManifestEntry, String, Manifest)} for several entries, in one write of the file. */
    public synchronized void prove(Map<ManifestEntry, String> how, Manifest manifest) throws IOException {
        how.forEach((e, h) -> byKey.put(e.objectKey(), Proof.of(e, h)));
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
                    .append(String.format("%08x", Integer.toUnsignedLong(p.crc32()))).append(' ')
                    .append(p.how().replace(' ', '-')).append(' ')
                    .append(p.key()).append('\n');
        }
        byte[] bodyBytes = body.toString().getBytes(StandardCharsets.UTF_8);
        CRC32 crc = new CRC32();
        crc.update(bodyBytes);
        String text = body + CRC_PREFIX + String.format("%08x", crc.getValue()) + "\n";
        DurableFiles.replace(file, text.getBytes(StandardCharsets.UTF_8), sync);
    }
}
