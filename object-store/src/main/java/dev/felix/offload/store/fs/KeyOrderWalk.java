package dev.felix.offload.store.fs;

import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ObjectSummary;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * One page of a filesystem store's listing, found by walking its directories in key order and
 * stopping once the page is full, so that listing a prefix of N objects in pages costs about N file
 * visits in all, not N per page.
 */
final class KeyOrderWalk {

    private final Path staging;
    private final Function<BasicFileAttributes, String> etags;

    /** @param staging the store's own directory, never listed; @param etags an object's ETag from its attributes */
    KeyOrderWalk(Path staging, Function<BasicFileAttributes, String> etags) {
        this.staging = staging;
        this.etags = etags;
    }

    /**
     * Adds to {@code out}, in key order, the objects under {@code dir} (whose keys begin with {@code base})
     * that begin with {@code prefix} and come after {@code after}, until it holds {@code max}; answers
     * whether one more follows. A page costs the directories on its way, not the whole tree: a
     * directory's keys all sort as its name followed by '/', so whole directories before {@code after}
     * or beside the prefix are never opened.
     */
    boolean walk(Path dir, String base, String prefix, String after, int max, List<ObjectSummary> out)
            throws IOException {
        List<String[]> children = new ArrayList<>(); // {sort key, name, "d" or "f"}
        try (java.nio.file.DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path child : stream) {
                if (child.equals(staging)) {
                    continue;
                }
                String name = child.getFileName().toString();
                if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
                    children.add(new String[] {base + name + "/", name, "d"});
                } else if (Files.isRegularFile(child, LinkOption.NOFOLLOW_LINKS)) {
                    children.add(new String[] {base + name, name, "f"});
                }
            }
        } catch (NoSuchFileException gone) {
            return false; // removed while listing: its keys may or may not appear
        }
        children.sort((x, y) -> KeyRules.UTF8_ORDER.compare(x[0], y[0]));
        for (String[] c : children) {
            String key = c[0];
            boolean directory = c[2].equals("d");
            if (directory) {
                // every key below starts with `key`: skip it when none can match the prefix or follow `after`
                if (!key.startsWith(prefix) && !prefix.startsWith(key)) {
                    continue;
                }
                if (after != null && KeyRules.UTF8_ORDER.compare(key, after) < 0 && !after.startsWith(key)) {
                    continue;
                }
                if (walk(dir.resolve(c[1]), key, prefix, after, max, out)) {
                    return true;
                }
                continue;
            }
            if (!key.startsWith(prefix) || (after != null && KeyRules.UTF8_ORDER.compare(key, after) <= 0)) {
                continue;
            }
            BasicFileAttributes attrs;
            try {
                attrs = Files.readAttributes(dir.resolve(c[1]), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                continue; // deleted while listing: such keys may or may not appear
            }
            if (out.size() == max) {
                return true;
            }
            out.add(new ObjectSummary(key, attrs.size(), etags.apply(attrs)));
        }
        return false;
    }

}
