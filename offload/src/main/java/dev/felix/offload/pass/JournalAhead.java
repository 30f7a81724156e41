package dev.felix.offload.pass;

import dev.felix.offload.root.PendingKeys;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One shard's writes to the journal of pending keys ({@link PendingKeys}), taken in batches. The
 * shard's pipeline names the keys of the next segments it will hand out; the first put among them
 * writes every named key with one append and one fsync, and the puts after it find theirs written.
 * One fsync per put was the largest fixed cost of a small segment's upload after its requests.
 *
 * <p>The journal's promise is unchanged: a key is durably in the journal before its request is
 * sent ({@link #ensure} returns only then). A key named here whose put never happens (the pass
 * stopped, the segment held no record) costs the next retention pass one HEAD, which finds nothing
 * and takes the key out of the journal; at most {@link #SEGMENTS} segments' keys are named ahead.
 *
 * <p>Safe for the shard's upload threads at once: one of them writes while the others wait for it,
 * and find their keys written.
 */
final class JournalAhead {

    /** Segments whose keys one journal write covers at most. */
    static final int SEGMENTS = 64;

    private final Path root;
    /** Keys named and not yet written; with {@link #written}, guarded by this. */
    private final Set<String> named = new LinkedHashSet<>();
    private final Set<String> written = new HashSet<>();

    JournalAhead(Path root) {
        this.root = root;
    }

    /** Names keys to write with the next journal write. */
    synchronized void name(Collection<String> keys) {
        for (String key : keys) {
            if (!written.contains(key)) {
                named.add(key);
            }
        }
    }

    /** Whether {@code key} is named or written already. */
    synchronized boolean covers(String key) {
        return named.contains(key) || written.contains(key);
    }

    /** Returns once {@code key} is durably in the journal, writing it and every key named with it if it is not. */
    synchronized void ensure(String key) throws IOException {
        if (written.contains(key)) {
            return;
        }
        named.add(key);
        PendingKeys.addAll(root, named);
        written.addAll(named);
        named.clear();
    }
}
