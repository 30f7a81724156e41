package dev.felix.offload.root;

import java.util.Objects;
import java.util.Optional;

/**
 * The one rule for which object keys a shard may delete. Every remote delete (remote retention,
 * the deleted-stream clean-up, the orphan sweep) asks it, so a key that another shard still needs
 * is never deleted, whoever holds a manifest naming it.
 *
 * <p>A shard may delete a key only when both hold:
 * <ol>
 *   <li>the key lies in the shard's own prefix under this node's id: directly under
 *       {@code [prefix/]<node id>/<shard directory>/};</li>
 *   <li>no manifest of a live shard of the root, other than the deleting shard's own, names it, and
 *       every live manifest could be read (an unreadable one might name it).</li>
 * </ol>
 * A manifest entry whose key lies outside its own shard's prefix (a copied shard directory's, say,
 * or another node's) is therefore never deleted by anyone on that entry's account; {@code scrub}
 * reports it as a {@code foreign-key}.
 *
 * <p>Entries written by 0.6.0-preview.3 name keys without a node id, directly under
 * {@code [prefix/]<shard directory>/} ({@link #isLegacyKey}). They are the shard's history (scrub
 * takes them as its own), but not this root's alone: before node ids, the replicas of a shard on
 * every broker sharing the store named the same keys, so another root's manifest may still name
 * one while its local copy is long gone. Such a key is never deleted as a side effect
 * ({@link Refusal#LEGACY_KEY}): an expiring entry leaves the manifest and its object stays, and only
 * an operator naming the keys or their shard deletes them ({@code felix-offload legacy-keys}), or
 * copies them under this node's prefix first so that its own deletes are owner-checked again.
 *
 * <p>The same holds for keys under a node id this root had before {@code felix-offload reidentify}
 * gave it its own ({@link FormerNodeIds}, {@link Refusal#FORMER_NODE_KEY}): the root it was copied
 * from still writes and deletes there.
 */
public final class KeyOwnership {

    /** Why a key may not be deleted. */
    public enum Refusal {
        /** The key does not lie directly under the deleting shard's own prefix. */
        OUTSIDE_SHARD_PREFIX,
        /** A live shard other than the deleting one names the key in its manifest. */
        NAMED_BY_ANOTHER_SHARD,
        /** A live shard's manifest could not be read, so what it names is unknown. */
        A_LIVE_MANIFEST_UNREADABLE,
        /**
         * A key of the shard without a node id (0.6.0-preview.3): the replicas of the shard on other
         * brokers sharing the store named the same key, so another root may still need it.
         */
        LEGACY_KEY,
        /**
         * A key of the shard under a node id this root had before it was given its own: the root it
         * was copied from writes there, and may still need it.
         */
        FORMER_NODE_KEY;

        /** The name reports use: lower case, words joined by {@code -}. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    private final String prefix;
    private final String nodePrefix;
    /** The prefixes of the node ids this root had before {@code reidentify} gave it its own. */
    private final java.util.List<String> formerNodePrefixes;

    /** @param keys the key layout of this root's node (key prefix and node id) */
    public KeyOwnership(SegmentKeys keys) {
        this(keys, java.util.List.of());
    }

    /**
     * @param keys          the key layout of this root's node (key prefix and node id)
     * @param formerNodeIds node ids this root offloaded under before it was given its own
     *                      ({@link FormerNodeIds}): keys under them are the shards' history, never
     *                      theirs to delete
     */
    public KeyOwnership(SegmentKeys keys, java.util.Collection<String> formerNodeIds) {
        Objects.requireNonNull(keys, "keys");
        this.nodePrefix = keys.nodePrefix();
        String node = keys.nodeId() + "/";
        this.prefix = nodePrefix.substring(0, nodePrefix.length() - node.length());
        this.formerNodePrefixes = formerNodeIds.stream().filter(id -> !id.equals(keys.nodeId()))
                .map(id -> prefix + id + "/").toList();
    }

    /** The rule for {@code root}, with the node ids it had before ({@link FormerNodeIds}). */
    public static KeyOwnership of(dev.felix.offload.log.DataRoot root, SegmentKeys keys) throws java.io.IOException {
        return new KeyOwnership(keys, FormerNodeIds.read(root));
    }

    /**
     * Whether the key lies directly under the shard's own prefix: this node's, or the form without a
     * node id ({@link #isLegacyKey}), which is the shard's history but not deletable by it. Only a
     * plain object name may follow the prefix: nothing with a further {@code /}.
     */
    public boolean inShardPrefix(String shardDirectory, String key) {
        Objects.requireNonNull(shardDirectory, "shardDirectory");
        Objects.requireNonNull(key, "key");
        if (!isShardName(shardDirectory)) {
            return false;
        }
        if (directlyUnder(key, nodePrefix + shardDirectory + "/") || directlyUnder(key, prefix + shardDirectory + "/")) {
            return true;
        }
        return isFormerNodeKey(shardDirectory, key);
    }

    /**
     * Whether the key lies directly under the shard's prefix of a node id this root had before it
     * was given its own ({@code felix-offload reidentify}): its history from then, which the root
     * it was copied from may still need, and never this one's to delete.
     */
    public boolean isFormerNodeKey(String shardDirectory, String key) {
        if (!isShardName(shardDirectory)) {
            return false;
        }
        for (String former : formerNodePrefixes) {
            if (directlyUnder(key, former + shardDirectory + "/")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the key is one of the shard's written before keys carried a node id: directly under
     * {@code [prefix/]<shard directory>/}, and not under this node's prefix.
     */
    public boolean isLegacyKey(String shardDirectory, String key) {
        Objects.requireNonNull(shardDirectory, "shardDirectory");
        Objects.requireNonNull(key, "key");
        return isShardName(shardDirectory) && !directlyUnder(key, nodePrefix + shardDirectory + "/")
                && directlyUnder(key, prefix + shardDirectory + "/");
    }

    /** Whether the key lies directly under the shard's prefix under this node's own id: one it may delete. */
    public boolean inOwnShardPrefix(String shardDirectory, String key) {
        return isShardName(shardDirectory) && directlyUnder(key, nodePrefix + shardDirectory + "/");
    }

    /** The prefix of a shard's keys written before keys carried a node id: {@code [prefix/]<shard>/}. */
    public String legacyShardPrefix(String shardDirectory) {
        return prefix + shardDirectory + "/";
    }

    /** Whether the key lies under this node's prefix at all (in any shard's, or none). */
    public boolean underNodePrefix(String key) {
        return key.startsWith(nodePrefix);
    }

    /**
     * A shard's name under the data root: a directory name, or a container and a directory name
     * ({@code dead-letters/<dir>}); no element empty, {@code .} or {@code ..}.
     */
    private static boolean isShardName(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (String part : name.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                return false;
            }
        }
        return true;
    }

    /**
     * The shard whose prefix a key of this node (or of the pre-node-id form) lies in: what follows
     * the prefix up to the object name ({@code dead-letters/<dir>} for a dead-letter shard's key);
     * empty for a key under neither prefix or without a shard part.
     */
    public Optional<String> shardOf(String key) {
        String rest;
        if (key.startsWith(nodePrefix)) {
            rest = key.substring(nodePrefix.length());
        } else if (key.startsWith(prefix)) {
            rest = key.substring(prefix.length());
        } else {
            return Optional.empty();
        }
        int last = rest.lastIndexOf('/');
        return last <= 0 ? Optional.empty() : Optional.of(rest.substring(0, last));
    }

    private static boolean directlyUnder(String key, String dir) {
        return key.length() > dir.length() && key.startsWith(dir) && key.indexOf('/', dir.length()) < 0;
    }

    /**
     * The shard directory a key's prefix names: the path element before its object name (for
     * {@code n1/acme.x.0/...segment}, {@code acme.x.0}); empty for a key without one.
     */
    public static Optional<String> shardDirectoryOf(String key) {
        int last = key.lastIndexOf('/');
        if (last <= 0) {
            return Optional.empty();
        }
        int before = key.lastIndexOf('/', last - 1);
        String dir = key.substring(before + 1, last);
        return dir.isEmpty() ? Optional.empty() : Optional.of(dir);
    }

    /**
     * Why the live shard {@code shardDirectory} may not delete {@code key}, or empty when it may. Its
     * own manifest naming the key does not count against it (it is expiring the entry).
     *
     * @param live what the root's live manifests name, read under the root's lock
     */
    public Optional<Refusal> refusal(String shardDirectory, String key, LiveKeys live) {
        return refusal(shardDirectory, key, live, true);
    }

    /**
     * Why {@code key} may not be deleted on the account of a shard that is not live: a deleted
     * stream's directory under {@code .deleted/}, or (for the orphan sweep, with
     * {@link #shardDirectoryOf}) a key no manifest claims. Any live manifest naming it counts,
     * including one of a live shard with the same directory name (a stream created again).
     */
    public Optional<Refusal> refusalForDeletedShard(String shardDirectory, String key, LiveKeys live) {
        return refusal(shardDirectory, key, live, false);
    }

    private Optional<Refusal> refusal(String shardDirectory, String key, LiveKeys live, boolean deleterIsLive) {
        if (!inShardPrefix(shardDirectory, key)) {
            return Optional.of(Refusal.OUTSIDE_SHARD_PREFIX);
        }
        if (isLegacyKey(shardDirectory, key)) {
            return Optional.of(Refusal.LEGACY_KEY);
        }
        if (isFormerNodeKey(shardDirectory, key)) {
            return Optional.of(Refusal.FORMER_NODE_KEY);
        }
        if (!live.unreadable().isEmpty()) {
            return Optional.of(Refusal.A_LIVE_MANIFEST_UNREADABLE);
        }
        boolean others = deleterIsLive ? live.namedByOtherThan(shardDirectory, key) : !live.shardsNaming(key).isEmpty();
        return others ? Optional.of(Refusal.NAMED_BY_ANOTHER_SHARD) : Optional.empty();
    }

    /**
     * Why {@code key}, which an operator named for deletion as a key of {@code shardDirectory}
     * without a node id, may still not go: it is not such a key ({@link Refusal#OUTSIDE_SHARD_PREFIX}),
     * a live manifest could not be read, or a live manifest of this root names it (the shard's own
     * included: its entry still reads from it). The {@link Refusal#LEGACY_KEY} refusal, which keeps
     * such keys from every side-effect delete, is what the operator lifts here by saying no other
     * replica needs them; nothing else does.
     */
    public Optional<Refusal> refusalOfNamedLegacyKey(String shardDirectory, String key, LiveKeys live) {
        if (!isLegacyKey(shardDirectory, key)) {
            return Optional.of(Refusal.OUTSIDE_SHARD_PREFIX);
        }
        if (!live.unreadable().isEmpty()) {
            return Optional.of(Refusal.A_LIVE_MANIFEST_UNREADABLE);
        }
        return live.shardsNaming(key).isEmpty() ? Optional.empty() : Optional.of(Refusal.NAMED_BY_ANOTHER_SHARD);
    }

    /** Whether the live shard {@code shardDirectory} may delete {@code key}: {@link #refusal} finds nothing. */
    public boolean mayDelete(String shardDirectory, String key, LiveKeys live) {
        return refusal(shardDirectory, key, live).isEmpty();
    }
}
