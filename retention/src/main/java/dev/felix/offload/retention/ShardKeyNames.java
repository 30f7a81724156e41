package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.SegmentKeys;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The names the orphan sweep reads keys and the root's directories by. */
final class ShardKeyNames {

    private ShardKeyNames() {
    }

    /** See {@link OrphanSweep#shardNameProblem}. */
    static String shardNameProblem(String name) {
        String[] parts = name.split("/", -1);
        boolean ok = parts.length == 1 || parts.length == 2 && CONTAINERS.contains(parts[0]);
        for (String part : parts) {
            ok &= !part.isEmpty() && !part.startsWith(".") && !part.contains("\\")
                    && part.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
        }
        return ok ? null : "'" + name + "' is not a shard's name (one undotted directory name, or "
                + String.join("/, ", CONTAINERS) + "/ and one)";
    }

    private static final List<String> CONTAINERS = List.of(DataRoot.GROUPS_DIR, DataRoot.DEAD_LETTERS_DIR,
            DataRoot.CACHES_DIR, DataRoot.COUNTERS_DIR);

    /** See {@link OrphanSweep#shardOf}. */
    static String shardOf(String key, String prefix) {
        String rest = key.substring(prefix.length());
        int slash = rest.lastIndexOf('/');
        if (slash <= 0) {
            return null;
        }
        String shard = rest.substring(0, slash);
        return shardNameProblem(shard) == null ? shard : null;
    }

    /** The base offset a segment key names ({@code <20 digits>-<20 digits>.segment}), when it names one. */
    static java.util.Optional<Long> baseOffsetOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        if (name.length() != 20 + 1 + 20 + SegmentKeys.SEGMENT_SUFFIX.length() || name.charAt(20) != '-'
                || !name.endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(Long.parseUnsignedLong(name.substring(0, 20)));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
    }

    /** The directories directly in {@code dir}, without those whose names start with a dot unless {@code dotted}. */
    static List<Path> directories(Path dir, boolean dotted) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if ((dotted || !entry.getFileName().toString().startsWith("."))
                        && Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                    out.add(entry);
                }
            }
        }
        out.sort(null);
        return out;
    }
}
