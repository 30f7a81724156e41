package dev.felix.offload.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A broker's data root: one directory per stream shard, plus identity files and dot-directories.
 *
 * <p>A shard directory is a directory directly under the root whose name does not start with a dot
 * and that holds at least one segment data file ({@code <20 digits>.log}). Dot-directories such as
 * {@code .deleted} and {@code .streams} are never read as shards; unknown files are ignored.
 */
public final class DataRoot {

    public static final String STORAGE_ID = "storage-id";
    public static final String RUN_STATE = "run-state";
    public static final String REGISTRATION = "registration";
    public static final String NODE_ID = "node-id";
    public static final String DELETED_DIR = ".deleted";
    public static final String STREAMS_DIR = ".streams";

    private final Path root;

    public DataRoot(Path root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    public Path path() {
        return root;
    }

    /** The shard directories under the root, sorted by name. */
    public List<Path> shardDirectories() throws IOException {
        List<Path> shards = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!name.startsWith(".") && Files.isDirectory(entry) && holdsSegments(entry)) {
                    shards.add(entry);
                }
            }
        }
        shards.sort(null);
        return shards;
    }

    private static boolean holdsSegments(Path dir) throws IOException {
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

    /** An identity file of the root by name, for example {@link #STORAGE_ID}; it may not exist. */
    public Path identityFile(String name) {
        if (!List.of(STORAGE_ID, RUN_STATE, REGISTRATION, NODE_ID).contains(name)) {
            throw new IllegalArgumentException("not an identity file of a data root: " + name);
        }
        return root.resolve(name);
    }
}
