package dev.felix.offload.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * A broker's data root, and the one definition of which of its directories are shards. Every command
 * (offload, retention and its orphan sweep, fsck, read, scrub, the daemon) lists shards through
 * {@link #list()} or its short forms, so no two of them can disagree about what a shard is.
 *
 * <p>Shard directories live at these levels, as the spec lays them out:
 * <ul>
 *   <li>directly under the root (stream shards);</li>
 *   <li>under {@value #GROUPS_DIR}/ and {@value #DEAD_LETTERS_DIR}/ (stream shards too);</li>
 *   <li>under {@value #CACHES_DIR}/ and {@value #COUNTERS_DIR}/ (cache shards: compaction rewrites
 *       their segments in place, so they are checked but never offloaded).</li>
 * </ul>
 * At every level a name starting with a dot ({@code .deleted}, {@code .streams}) is never a shard, and
 * the four container names are never shards at the root. A shard directory is a directory holding at
 * least one segment data file ({@code <20 digits>.log}) or an {@value #OFFLOAD_MANIFEST} (a shard whose
 * history is all in the store, as a restore leaves it). Incarnations need no rule of their own: an
 * incarnated shard is a directory at the same level whose name ends in its incarnation.
 *
 * <p>A shard is named by its path relative to the root with {@code /} between levels, for example
 * {@code dead-letters/acme_default_dlq_0-<hash>}: that name is what options, reports, logs and metrics
 * show, and what object keys carry after the node id. Root-level shards are named by their directory
 * name alone, as they always were.
 *
 * <p>Symbolic links: a link to a directory (a shard, or a whole container, moved to another disk and
 * linked back) is followed and is the shard its link name says, exactly as the broker opens it. Two
 * names for one directory are listed once, under the first name in order; the other is reported as
 * {@link Unreadable}. A link that leads nowhere, or an entry that cannot be examined, is reported as
 * {@link Unreadable} too, never silently dropped: a caller that deletes remote objects must keep
 * everything under an unreadable name's key prefix.
 */
public final class DataRoot {

    public static final String STORAGE_ID = "storage-id";
    public static final String RUN_STATE = "run-state";
    public static final String REGISTRATION = "registration";
    public static final String NODE_ID = "node-id";
    /** The root's lifelong identity as an offloader, which the store's node claim names (never replaced after a crash). */
    public static final String OFFLOAD_ROOT_ID = "offload-root-id";
    public static final String DELETED_DIR = ".deleted";
    public static final String STREAMS_DIR = ".streams";
    /** Consumer-group stream shards. */
    public static final String GROUPS_DIR = "groups";
    /** Dead-letter stream shards. */
    public static final String DEAD_LETTERS_DIR = "dead-letters";
    /** Cache shards (compacted in place). */
    public static final String CACHES_DIR = "caches";
    /** Counter shards (compacted in place). */
    public static final String COUNTERS_DIR = "counters";
    /** The file offload keeps in a shard directory; its presence alone makes a directory a shard. */
    public static final String OFFLOAD_MANIFEST = "offload.manifest";

    /** What a shard holds, which decides whether its sealed segments may be copied elsewhere. */
    public enum ShardKind {
        /** A stream shard: sealed segments never change, so they may be offloaded. */
        STREAM,
        /** A cache or counter shard: compaction trims segments in place, so a copy would go stale. */
        CACHE
    }

    /**
     * One shard of the root.
     *
     * @param name      its path relative to the root, {@code /}-separated ({@code groups/<dir>})
     * @param directory its directory (through the link, when the name is a symbolic link)
     * @param kind      stream or cache
     */
    public record Shard(String name, Path directory, ShardKind kind) {
        public Shard {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(directory, "directory");
            Objects.requireNonNull(kind, "kind");
        }

        /** True when its sealed segments may be offloaded (a stream shard). */
        public boolean offloadable() {
            return kind == ShardKind.STREAM;
        }

        /**
         * The name {@link DataRoot#list()} gives the shard in {@code directory}, told from the path
         * alone, for callers handed a directory without its root: {@code <container>/<dir>} when its
         * parent is one of the root's containers ({@code groups}, {@code dead-letters}, {@code caches},
         * {@code counters}), else the directory's own name. (A root-level shard of a data root that is
         * itself named like a container is named as if it were inside one: callers that know the root
         * take the shard's name from the listing.)
         */
        public static String nameOf(Path directory) {
            Path dir = directory.toAbsolutePath().normalize();
            Path name = dir.getFileName();
            if (name == null) {
                return directory.toString();
            }
            Path parent = dir.getParent();
            Path container = parent == null ? null : parent.getFileName();
            if (container != null && CONTAINERS.containsKey(container.toString())) {
                return container + "/" + name;
            }
            return name.toString();
        }
    }

    /**
     * A name at a shard level that may be a shard but could not be examined: a link leading nowhere,
     * an unreadable directory, a second name for a directory already listed.
     *
     * @param name   its path relative to the root, as a shard there would be named
     * @param path   the entry itself
     * @param reason why it is not listed as a shard, for operators
     */
    public record Unreadable(String name, Path path, String reason) {
    }

    /** The root's shards, sorted by name, and the names that could not be examined. */
    public record Listing(List<Shard> shards, List<Unreadable> unreadable) {
        public Listing {
            shards = List.copyOf(shards);
            unreadable = List.copyOf(unreadable);
        }

        /** The stream shards (those that may be offloaded), sorted by name. */
        public List<Shard> streamShards() {
            return shards.stream().filter(Shard::offloadable).toList();
        }

        /** The cache and counter shards, sorted by name. */
        public List<Shard> cacheShards() {
            return shards.stream().filter(s -> !s.offloadable()).toList();
        }
    }

    private static final Map<String, ShardKind> CONTAINERS = Map.of(
            GROUPS_DIR, ShardKind.STREAM,
            DEAD_LETTERS_DIR, ShardKind.STREAM,
            CACHES_DIR, ShardKind.CACHE,
            COUNTERS_DIR, ShardKind.CACHE);

    private final Path root;

    public DataRoot(Path root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    public Path path() {
        return root;
    }

    /**
     * A {@value #DELETED_DIR} directory where the broker moves the shard directories of deleted
     * streams, at one level of the root.
     *
     * @param container the level's prefix for shard names: {@code ""} at the root, else
     *                  {@code "groups/"} and so on; a deleted shard {@code d} there was the shard
     *                  {@code container + d} and its keys carry that path
     * @param directory the {@value #DELETED_DIR} directory itself (it may not exist)
     * @param kind      what the shards of that level are
     */
    public record DeletedLevel(String container, Path directory, ShardKind kind) {
    }

    /**
     * The {@value #DELETED_DIR} directories of every level that holds shards, the root's first, then
     * each container's in name order; existing or not.
     */
    public List<DeletedLevel> deletedLevels() {
        List<DeletedLevel> out = new ArrayList<>();
        out.add(new DeletedLevel("", root.resolve(DELETED_DIR), ShardKind.STREAM));
        CONTAINERS.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(c -> out.add(new DeletedLevel(
                c.getKey() + "/", root.resolve(c.getKey()).resolve(DELETED_DIR), c.getValue())));
        return out;
    }

    /**
     * Every shard of the root, streams and caches, and every name that might be one but could not be
     * examined.
     *
     * @throws IOException when the root itself cannot be listed
     */
    public Listing list() throws IOException {
        return list(() -> false).orElseThrow();
    }

    /** Entries examined between two asks of an abandonable {@link #list(BooleanSupplier)}: a few milliseconds. */
    public static final int ENTRIES_PER_ASK = 256;

    /**
     * As {@link #list()}, asking {@code abandon} after every {@value #ENTRIES_PER_ASK} entries examined and
     * answering empty as soon as it says yes: a pass that lists the root under its lock (tens of
     * thousands of shards take about a second) can let a waiting pass go first.
     *
     * @throws IOException when the root itself cannot be listed
     */
    public Optional<Listing> list(BooleanSupplier abandon) throws IOException {
        int examined = 0;
        List<Shard> shards = new ArrayList<>();
        List<Unreadable> unreadable = new ArrayList<>();
        // Where each plain directory really is, known from its parent's real path without asking the
        // file system again; only links are resolved one by one (at 30,000 shards, resolving every
        // path was most of a listing's time).
        Map<String, Path> reals = new HashMap<>();
        Path rootReal = realOrNull(root);
        for (Path entry : entries(root)) {
            if (++examined % ENTRIES_PER_ASK == 0 && abandon.getAsBoolean()) {
                return Optional.empty();
            }
            String name = entry.getFileName().toString();
            if (name.startsWith(".")) {
                continue;
            }
            ShardKind containerKind = CONTAINERS.get(name);
            if (containerKind == null) {
                consider(name, entry, ShardKind.STREAM, shards, unreadable, rootReal, reals);
                continue;
            }
            if (!Files.exists(entry)) {
                if (Files.isSymbolicLink(entry)) {
                    unreadable.add(new Unreadable(name, entry, "a symbolic link to nothing"));
                }
                continue;
            }
            if (!Files.isDirectory(entry)) {
                continue;
            }
            List<Path> inside;
            try {
                inside = entries(entry);
            } catch (NoSuchFileException | NotDirectoryException gone) {
                continue; // removed or replaced meanwhile
            } catch (IOException e) {
                unreadable.add(new Unreadable(name, entry, "cannot be listed: " + describe(e)));
                continue;
            }
            Path containerReal = realOrNull(entry);
            for (Path child : inside) {
                if (++examined % ENTRIES_PER_ASK == 0 && abandon.getAsBoolean()) {
                    return Optional.empty();
                }
                String childName = child.getFileName().toString();
                if (!childName.startsWith(".")) {
                    consider(name + "/" + childName, child, containerKind, shards, unreadable, containerReal, reals);
                }
            }
        }
        shards.sort(Comparator.comparing(Shard::name));
        List<Shard> unique = new ArrayList<>(shards.size());
        Map<Path, String> seen = new HashMap<>();
        for (Shard s : shards) {
            Path real = reals.get(s.name());
            if (real == null) {
                try {
                    real = s.directory().toRealPath();
                } catch (NoSuchFileException gone) {
                    continue; // removed since it was examined
                } catch (IOException e) {
                    unreadable.add(new Unreadable(s.name(), s.directory(), "cannot be resolved: " + describe(e)));
                    continue;
                }
            }
            String first = seen.putIfAbsent(real, s.name());
            if (first == null) {
                unique.add(s);
            } else {
                unreadable.add(new Unreadable(s.name(), s.directory(), "the same directory as shard " + first));
            }
        }
        unreadable.sort(Comparator.comparing(Unreadable::name));
        return Optional.of(new Listing(unique, unreadable));
    }

    private static Path realOrNull(Path dir) {
        try {
            return dir.toRealPath();
        } catch (IOException e) {
            return null; // every entry under it is resolved on its own then
        }
    }

    /** Every shard of the root, streams and caches, sorted by name. */
    public List<Shard> shards() throws IOException {
        return list().shards();
    }

    /** The stream shards, the ones offload copies, sorted by name. */
    public List<Shard> streamShards() throws IOException {
        return list().streamShards();
    }

    /**
     * The shard named {@code name} (a path relative to the root, as {@link Shard#name()} gives it),
     * when the root lists it; empty for anything else, such as a path leaving the root.
     */
    public Optional<Shard> shard(String name) throws IOException {
        if (name == null || name.isEmpty() || name.contains("\\") || name.contains("..")) {
            return Optional.empty();
        }
        for (Shard s : shards()) {
            if (s.name().equals(name)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /**
     * A shard name the root lists as {@link Unreadable}: an I/O problem to report as one (the name
     * may well be a shard), never "no such shard".
     */
    public static final class UnreadableShardException extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient Unreadable unreadable;

        UnreadableShardException(Unreadable unreadable) {
            super("shard " + unreadable.name() + " could not be read: " + unreadable.reason());
            this.unreadable = unreadable;
        }

        public Unreadable unreadable() {
            return unreadable;
        }
    }

    /**
     * Fails when the root lists {@code name} as a name it could not examine (see {@link Unreadable});
     * returns quietly otherwise, whether or not it names a shard.
     */
    public void requireReadable(String name) throws IOException {
        for (Unreadable u : list().unreadable()) {
            if (u.name().equals(name)) {
                throw new UnreadableShardException(u);
            }
        }
    }

    private static void consider(String name, Path entry, ShardKind kind, List<Shard> shards,
                                 List<Unreadable> unreadable, Path parentReal, Map<String, Path> reals) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(entry,
                    java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if (a.isSymbolicLink()) {
                if (!Files.exists(entry)) {
                    unreadable.add(new Unreadable(name, entry, "a symbolic link to nothing"));
                    return;
                }
                if (Files.isDirectory(entry) && isShardDirectory(entry)) {
                    shards.add(new Shard(name, entry, kind));
                }
                return;
            }
            if (a.isDirectory() && isShardDirectory(entry)) {
                shards.add(new Shard(name, entry, kind));
                if (parentReal != null) {
                    reals.put(name, parentReal.resolve(entry.getFileName().toString()));
                }
            }
        } catch (NoSuchFileException | NotDirectoryException gone) {
            // removed or replaced since the listing: not a shard now
        } catch (IOException e) {
            unreadable.add(new Unreadable(name, entry, "cannot be listed: " + describe(e)));
        }
    }

    private static boolean isShardDirectory(Path dir) throws IOException {
        if (Files.isRegularFile(dir.resolve(OFFLOAD_MANIFEST))) {
            return true;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*" + SegmentFile.LOG_SUFFIX)) {
            for (Path entry : entries) {
                OptionalLong id = SegmentFile.parseLogName(entry.getFileName().toString());
                if (id.isPresent() && Files.isRegularFile(entry)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<Path> entries(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                out.add(entry);
            }
        }
        return out;
    }

    /** The file and the cause as an operator reads them ("/data/x: permission denied"). */
    private static String describe(IOException e) {
        return IoProblem.describe(e);
    }

    /** An identity file of the root by name, for example {@link #STORAGE_ID}; it may not exist. */
    public Path identityFile(String name) {
        if (!List.of(STORAGE_ID, RUN_STATE, REGISTRATION, NODE_ID, OFFLOAD_ROOT_ID).contains(name)) {
            throw new IllegalArgumentException("not an identity file of a data root: " + name);
        }
        return root.resolve(name);
    }
}
