package dev.felix.offload.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * Everything a command could change, captured so that "it changed nothing" is a comparison: every
 * file and directory under some roots (by size and CRC32 of the content) and any number of object
 * listings (key to size and ETag).
 *
 * <p>Two things are left out on purpose: {@code offload.lock} and {@code daemon.lock} name the pid of
 * the last process that held a data root, so every run that takes the lock rewrites it without changing anything a user
 * keeps; and a filesystem store's {@code .felix-staging} directory, its scratch space for puts in
 * progress, which opening the store creates and which no listing shows.
 */
final class World {

    private static final String LOCK_FILE = "offload.lock";
    private static final String DAEMON_LOCK_FILE = "daemon.lock";
    private static final String STAGING_DIR = ".felix-staging";

    private final Map<String, Path> roots = new LinkedHashMap<>();
    private final Map<String, Supplier<Map<String, String>>> listings = new LinkedHashMap<>();

    World dir(String name, Path root) {
        roots.put(name, root);
        return this;
    }

    World listing(String name, Supplier<Map<String, String>> listing) {
        listings.put(name, listing);
        return this;
    }

    /** What there is now, as sorted "name/relative path" to description. */
    Map<String, String> snapshot() throws IOException {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, Path> r : roots.entrySet()) {
            Path root = r.getValue();
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                out.put(r.getKey(), "absent");
                continue;
            }
            try (Stream<Path> all = Files.walk(root)) {
                for (Path p : (Iterable<Path>) all::iterator) {
                    Path relative = root.relativize(p);
                    if (p.getFileName().toString().equals(LOCK_FILE) || p.getFileName().toString().equals(DAEMON_LOCK_FILE)
                            || (relative.getNameCount() > 0 && relative.getName(0).toString().equals(STAGING_DIR))) {
                        continue;
                    }
                    String name = r.getKey() + "/" + relative.toString().replace('\\', '/');
                    out.put(name, describe(p));
                }
            }
        }
        for (Map.Entry<String, Supplier<Map<String, String>>> l : listings.entrySet()) {
            l.getValue().get().forEach((key, what) -> out.put(l.getKey() + ":" + key, what));
        }
        return out;
    }

    private static String describe(Path p) throws IOException {
        if (Files.isSymbolicLink(p)) {
            return "link to " + Files.readSymbolicLink(p);
        }
        if (Files.isDirectory(p)) {
            return "dir";
        }
        CRC32 crc = new CRC32();
        byte[] buf = new byte[64 * 1024];
        long size = 0;
        try (InputStream in = Files.newInputStream(p)) {
            for (int n; (n = in.read(buf)) > 0; size += n) {
                crc.update(buf, 0, n);
            }
        }
        return size + " bytes, crc32 " + Long.toHexString(crc.getValue());
    }

    /** What differs between two snapshots, one line each; empty when nothing does. */
    static List<String> differences(Map<String, String> before, Map<String, String> after) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> b : before.entrySet()) {
            String now = after.get(b.getKey());
            if (now == null) {
                out.add("gone: " + b.getKey() + " (" + b.getValue() + ")");
            } else if (!Objects.equals(now, b.getValue())) {
                out.add("changed: " + b.getKey() + " (" + b.getValue() + " -> " + now + ")");
            }
        }
        for (Map.Entry<String, String> a : after.entrySet()) {
            if (!before.containsKey(a.getKey())) {
                out.add("new: " + a.getKey() + " (" + a.getValue() + ")");
            }
        }
        return out;
    }
}
