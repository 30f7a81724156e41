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

    /** A directory's entry: its key (a directory's ends with '/', as every key below it begins), its name. */
    private record Child(String key, String name, boolean directory) {
    }

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
        List<Child> children = new ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path child : stream) {
                if (child.equals(staging)) {
                    continue;
                }
                String name = child.getFileName().toString();
                if (!mayHold(base + name, prefix)) {
                    // Told by its name alone, before any stat: a lease listing in a node directory of
                    // 30,000 shard directories otherwise stats every one of them, at every listing.
                    continue;
                }
                if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
                    children.add(new Child(base + name + "/", name, true));
                } else if (Files.isRegularFile(child, LinkOption.NOFOLLOW_LINKS)) {
                    children.add(new Child(base + name, name, false));
                }
            }
        } catch (NoSuchFileException gone) {
            return false; // removed while listing: its keys may or may not appear
        }
        children.sort((x, y) -> KeyRules.UTF8_ORDER.compare(x.key(), y.key()));
        for (Child c : children) {
            String key = c.key();
            if (c.directory()) {
                // every key below starts with `key`: skip it when none can match the prefix or follow `after`
                if (!mayHold(key, prefix)) {
                    continue;
                }
                if (after != null && KeyRules.UTF8_ORDER.compare(key, after) < 0 && !after.startsWith(key)) {
                    continue;
                }
                if (walk(dir.resolve(c.name()), key, prefix, after, max, out)) {
                    return true;
                }
                continue;
            }
            if (!key.startsWith(prefix) || (after != null && KeyRules.UTF8_ORDER.compare(key, after) <= 0)) {
                continue;
            }
            BasicFileAttributes attrs;
            try {
                attrs = Files.readAttributes(dir.resolve(c.name()), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
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

    /**
     * Whether the entry whose key (a file's) or keys (a directory's, all beginning with {@code key + "/"})
     * start with {@code key} can match {@code prefix}: it is within the prefix, or on the way to it.
     */
    static boolean mayHold(String key, String prefix) {
        return key.startsWith(prefix) || prefix.startsWith(key);
    }
}
