package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Manifests decoded once per change. Every reader of manifests in a process (the offload pass's look
 * for work, retention, the sweep, the daemon's survey behind {@code /shards} and {@code /metrics})
 * asks here instead of decoding the file itself, and the file is decoded again only when its
 * identity changed: its file key (device and inode), size or modification time. A manifest is only
 * ever replaced by a rename, which gives it another inode or another time, so a change is seen.
 *
 * <p>Two things are kept per file: its {@link ManifestSummary} (a few dozen bytes, for every shard)
 * and the decoded {@link Manifest} itself, the latter only within a bound on their total size (least
 * recently used first out), so a root of any size costs at most that bound beyond its summaries.
 *
 * <p>A file whose modification time lies within {@link #RACY_NANOS} of the moment it was looked at is
 * not trusted from the cache: a second replacement within the file system's time granularity could
 * leave every part of its identity as it was (an inode can be reused at once). Such a file is read
 * and decoded on every ask until it has stood still that long, which only costs what reading it
 * always cost. Nothing that deletes or unlinks takes a decoding from here: {@link ManifestStore#open}
 * and its reloads read and decode the file's bytes themselves every time (and compare them before they
 * replace the file); they only leave their decoding here for the readers.
 */
public final class ManifestCache {

    /** How long a file must have stood unchanged before its cached decoding is trusted: 2 s. */
    static final long RACY_NANOS = 2_000_000_000L;
    /** The most the process-wide cache keeps of decoded manifests beyond their summaries: 32 MiB. */
    public static final long DEFAULT_MANIFEST_BYTES = 32L * 1024 * 1024;

    private static final ManifestCache SHARED = new ManifestCache(
            Long.getLong("felix.manifest-cache.bytes", defaultManifestBytes(Runtime.getRuntime().maxMemory())));

    /**
     * What the process-wide cache keeps of decoded manifests in a heap of {@code maxHeap} bytes:
     * {@link #DEFAULT_MANIFEST_BYTES}, or a sixteenth of the heap where that is less. A one-shot
     * command run in a small heap (retention at 30,000 shards under {@code -Xmx64m}) otherwise ran out
     * of memory holding decodings no reader of its process asks for again.
     */
    static long defaultManifestBytes(long maxHeap) {
        return Math.min(DEFAULT_MANIFEST_BYTES, maxHeap / 16);
    }

    /** A file's identity: what a replacement changes. */
    record Identity(Object fileKey, long size, long modifiedNanos) {
    }

    private record Known(Identity identity, ManifestSummary summary) {
    }

    private final long maxManifestBytes;
    private final Map<Path, Known> summaries = new ConcurrentHashMap<>();
    /** Decoded manifests, least recently used first; guarded by itself. */
    private final LinkedHashMap<Path, Decoded> manifests = new LinkedHashMap<>(64, 0.75f, true);
    private long manifestBytes;
    private final LongAdder decodes = new LongAdder();

    private record Decoded(Identity identity, Manifest manifest, long weight) {
    }

    /** @param maxManifestBytes what decoded manifests may take in all (0 keeps none, only summaries) */
    public ManifestCache(long maxManifestBytes) {
        if (maxManifestBytes < 0) {
            throw new IllegalArgumentException("bound must not be negative: " + maxManifestBytes);
        }
        this.maxManifestBytes = maxManifestBytes;
    }

    /** The cache every reader of this process shares. */
    public static ManifestCache shared() {
        return SHARED;
    }

    /**
     * The summary of the manifest of {@code shardDir}, as the file is now: the empty summary when
     * there is no file.
     *
     * @throws CorruptionException when the file does not decode
     * @throws IOException         when the directory is missing (see {@link ManifestStore#read}) or unreadable
     */
    public ManifestSummary summary(Path shardDir) throws IOException, CorruptionException {
        Path key = key(shardDir);
        Identity now = identity(shardDir);
        if (now == null) {
            summaries.remove(key);
            return ManifestSummary.EMPTY;
        }
        Known known = summaries.get(key);
        if (known != null && known.identity().equals(now) && settled(now)) {
            return known.summary();
        }
        return decode(shardDir, key, now).summary;
    }

    /**
     * The manifest of {@code shardDir} as the file is now, decoded only when it changed since it was
     * last decoded here (and still held within the bound); the empty manifest when there is no file.
     */
    public Manifest manifest(Path shardDir) throws IOException, CorruptionException {
        Path key = key(shardDir);
        Identity now = identity(shardDir);
        if (now == null) {
            summaries.remove(key);
            return Manifest.empty();
        }
        synchronized (manifests) {
            Decoded d = manifests.get(key);
            if (d != null && d.identity().equals(now) && settled(now)) {
                return d.manifest();
            }
        }
        return decode(shardDir, key, now).manifest;
    }

    /**
     * For {@link ManifestStore#open}, which read {@code length} bytes from the file itself after taking
     * its identity {@code before} and decoded them itself ({@code manifest}): keeps that decoding for
     * the readers here when the file is provably the one read (the same identity now, its size the
     * bytes' length, settled). The store never takes a decoding from here: it decides what may be
     * unlinked, so it always decodes the bytes it holds.
     */
    void offer(Path shardDir, Identity before, int length, Manifest manifest) {
        if (before == null || before.size() != length || !settled(before) || !before.equals(identityOf(shardDir))) {
            return;
        }
        Path key = key(shardDir);
        summaries.put(key, new Known(before, ManifestSummary.of(manifest)));
        keep(key, before, manifest);
    }

    /** The identity of the manifest file of {@code shardDir}, null when there is none or no directory. */
    static Identity identityOf(Path shardDir) {
        try {
            BasicFileAttributes a = Files.readAttributes(ManifestStore.fileIn(shardDir), BasicFileAttributes.class);
            return new Identity(a.fileKey(), a.size(), nanos(a.lastModifiedTime().toInstant()));
        } catch (IOException e) {
            return null;
        }
    }

    /** What a decode found, for the two askers. */
    private record Fresh(Manifest manifest, ManifestSummary summary) {
    }

    private Fresh decode(Path shardDir, Path key, Identity before) throws IOException, CorruptionException {
        Manifest manifest;
        try {
            manifest = ManifestStore.read(shardDir);
        } catch (CorruptionException e) {
            summaries.remove(key);
            forgetDecoded(key);
            throw e;
        }
        decodes.increment();
        ManifestSummary summary = ManifestSummary.of(manifest);
        // The identity taken before the read: a change after it shows as another identity next time.
        summaries.put(key, new Known(before, summary));
        keep(key, before, manifest);
        return new Fresh(manifest, summary);
    }

    private void keep(Path key, Identity identity, Manifest manifest) {
        if (maxManifestBytes == 0) {
            return;
        }
        long weight = weightOf(manifest);
        if (weight > maxManifestBytes / 4) {
            return; // one manifest never crowds out most of the others
        }
        synchronized (manifests) {
            Decoded old = manifests.put(key, new Decoded(identity, manifest, weight));
            manifestBytes += weight - (old == null ? 0 : old.weight());
            Iterator<Map.Entry<Path, Decoded>> oldest = manifests.entrySet().iterator();
            while (manifestBytes > maxManifestBytes && oldest.hasNext()) {
                Map.Entry<Path, Decoded> e = oldest.next();
                if (e.getKey().equals(key)) {
                    continue;
                }
                manifestBytes -= e.getValue().weight();
                oldest.remove();
            }
        }
    }

    private void forgetDecoded(Path key) {
        synchronized (manifests) {
            Decoded old = manifests.remove(key);
            if (old != null) {
                manifestBytes -= old.weight();
            }
        }
    }

    /** Drops what is kept of shard directories not in {@code shardDirs} (shards gone from the root). */
    public void retainOnly(Collection<Path> shardDirs) {
        Set<Path> keep = new HashSet<>();
        for (Path p : shardDirs) {
            keep.add(key(p));
        }
        summaries.keySet().removeIf(k -> !keep.contains(k));
        synchronized (manifests) {
            manifests.entrySet().removeIf(e -> {
                if (keep.contains(e.getKey())) {
                    return false;
                }
                manifestBytes -= e.getValue().weight();
                return true;
            });
        }
    }

    /** Manifests decoded here so far: how tests see that an unchanged file is not decoded again. */
    public long decodes() {
        return decodes.sum();
    }

    /** Bytes the decoded manifests held now are reckoned to take. */
    public long manifestBytes() {
        synchronized (manifests) {
            return manifestBytes;
        }
    }

    /** Shard directories whose summaries are held. */
    public int summaries() {
        return summaries.size();
    }

    private static Path key(Path shardDir) {
        return shardDir.toAbsolutePath().normalize();
    }

    /** The manifest file's identity, or null when there is none; fails as a read would on a missing directory. */
    private static Identity identity(Path shardDir) throws IOException {
        Path file = ManifestStore.fileIn(shardDir);
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return new Identity(a.fileKey(), a.size(), nanos(a.lastModifiedTime().toInstant()));
        } catch (NoSuchFileException absent) {
            if (!Files.isDirectory(shardDir)) {
                if (Files.exists(shardDir, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(shardDir)) {
                    throw new NotDirectoryException(shardDir.toString());
                }
                throw new NoSuchFileException(shardDir.toString(), null, "no shard directory");
            }
            return null;
        }
    }

    private static boolean settled(Identity identity) {
        long age = nanos(Instant.now()) - identity.modifiedNanos();
        return age >= RACY_NANOS;
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static long weightOf(Manifest m) {
        long w = 128;
        for (ManifestEntry e : m.entries()) {
            w += 112 + 2L * e.objectKey().length();
        }
        return w;
    }

    @Override
    public String toString() {
        return "ManifestCache[" + summaries.size() + " summaries, " + manifestBytes() + " of " + maxManifestBytes
                + " bytes of manifests]";
    }
}
