package dev.felix.offload.scrub;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.scrub.Scrub.Anomaly;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whose keys a scrub run's entries name, by the root's {@link KeyOwnership}: keys without a node id
 * or under a node id the root had before are counted for a note (other roots may need them, so this
 * root never deletes them); a key outside its own shard's prefix is an anomaly. Nothing is looked for
 * while the root has no node id.
 */
final class EntryKeys {

    private final Optional<KeyOwnership> ownership;
    private int legacy;
    private int formerNode;

    /** @param ownership the root's key ownership, empty when it has no node id */
    EntryKeys(Optional<KeyOwnership> ownership) {
        this.ownership = ownership;
    }

    /** Counts the form of {@code entry}'s key; answers the anomaly of a key outside the shard's prefix, if it is one. */
    List<Anomaly> examine(String shard, ManifestEntry entry) {
        List<Anomaly> found = new ArrayList<>();
        if (ownership.isEmpty()) {
            return found;
        }
        KeyOwnership keys = ownership.get();
        String key = entry.objectKey();
        if (keys.isLegacyKey(shard, key)) {
            legacy++;
        } else if (keys.isFormerNodeKey(shard, key)) {
            formerNode++;
        }
        if (!keys.inShardPrefix(shard, key)) {
            String owner = keys.shardOf(key).orElse("");
            found.add(Anomaly.foreignKey(shard, entry.segmentId(), key,
                    "the key lies in " + (owner.isEmpty() ? "no shard's prefix" : "shard " + owner + "'s prefix")
                            + ", not in " + shard + "'s; no pass deletes it on this entry's account", owner));
        }
        return found;
    }

    /** The note on keys of other forms that entries name, when there were any. */
    Optional<String> note() {
        if (legacy + formerNode == 0) {
            return Optional.empty();
        }
        return Optional.of(legacy + " entries name keys without a node id and " + formerNode + " keys under a "
                + "node id this root had before reidentify: other roots may need them, so this root never deletes "
                + "them; `felix-offload legacy-keys` lists them and copies them under its own node id");
    }
}
