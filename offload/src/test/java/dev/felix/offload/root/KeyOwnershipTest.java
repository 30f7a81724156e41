package dev.felix.offload.root;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyOwnershipTest {

    private static final String SHARD = "acme.default.orders.0";
    private static final String KEY = "n1/" + SHARD + "/00000000000000000000-00000000000000000000.segment";

    private final KeyOwnership ownership = new KeyOwnership(new SegmentKeys("", "n1"));
    private final KeyOwnership prefixed = new KeyOwnership(new SegmentKeys("tier/prod", "n1"));

    @Test
    void aShardOwnsOnlyKeysDirectlyUnderItsOwnPrefix() {
        assertThat(ownership.inShardPrefix(SHARD, KEY)).isTrue();
        assertThat(ownership.inShardPrefix(SHARD, SHARD + "/00000000000000000000-00000000000000000000.segment"))
                .as("an entry written before keys carried a node id: the shard's, though never deleted by it").isTrue();
        assertThat(ownership.inShardPrefix(SHARD + ".bak", KEY)).as("a copy of the directory").isFalse();
        assertThat(ownership.inShardPrefix("acme.default.orders", KEY)).as("a name that is a prefix of it").isFalse();
        assertThat(ownership.inShardPrefix(SHARD, "n2/" + SHARD + "/x.segment")).as("another node's").isFalse();
        assertThat(ownership.inShardPrefix(SHARD, "n1/" + SHARD + "/deeper/x.segment")).isFalse();
        assertThat(ownership.inShardPrefix(SHARD, "n1/" + SHARD + "/")).isFalse();
        assertThat(ownership.inShardPrefix(SHARD, "other/n1/" + SHARD + "/x.segment")).isFalse();
        assertThat(prefixed.inShardPrefix(SHARD, "tier/prod/" + KEY)).isTrue();
        assertThat(prefixed.inShardPrefix(SHARD, "tier/prod/" + SHARD + "/x.segment")).isTrue();
        assertThat(prefixed.inShardPrefix(SHARD, KEY)).as("outside the key prefix").isFalse();
    }

    @Test
    void aKeyNamedByAnotherLiveShardOrAnUnreadableManifestIsNeverDeletable() {
        LiveKeys none = LiveKeys.of(Map.of(), List.of());
        LiveKeys ownOnly = LiveKeys.of(Map.of(KEY, Set.of(SHARD)), List.of());
        LiveKeys copy = LiveKeys.of(Map.of(KEY, Set.of(SHARD, SHARD + ".bak")), List.of());
        LiveKeys unreadable = LiveKeys.of(Map.of(), List.of("acme.default.audit.0"));

        assertThat(ownership.refusal(SHARD, KEY, none)).isEmpty();
        assertThat(ownership.refusal(SHARD, KEY, ownOnly)).isEmpty();
        assertThat(ownership.mayDelete(SHARD, KEY, ownOnly)).isTrue();
        assertThat(ownership.refusal(SHARD, KEY, copy)).contains(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD);
        assertThat(ownership.refusal(SHARD + ".bak", KEY, copy)).contains(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX);
        assertThat(ownership.refusal(SHARD, KEY, unreadable)).contains(KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE);
        // a deleted stream's directory is no live shard: any live naming keeps the key, even a shard
        // of the same name (the stream created again)
        assertThat(ownership.refusalForDeletedShard(SHARD, KEY, none)).isEmpty();
        assertThat(ownership.refusalForDeletedShard(SHARD, KEY, ownOnly)).contains(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD);
        assertThat(ownership.refusalForDeletedShard(SHARD + ".bak", KEY, none))
                .contains(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX);
        assertThat(ownership.refusalForDeletedShard(SHARD, KEY, unreadable))
                .contains(KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE);
    }

    @Test
    void aKeyWithoutANodeIdIsTheShardsButNeverDeletedByIt() {
        String legacy = SHARD + "/00000000000000000000-00000000000000000000.segment";
        LiveKeys ownOnly = LiveKeys.of(Map.of(legacy, Set.of(SHARD)), List.of());
        assertThat(ownership.isLegacyKey(SHARD, legacy)).isTrue();
        assertThat(ownership.isLegacyKey(SHARD, KEY)).isFalse();
        assertThat(ownership.isLegacyKey(SHARD + ".bak", legacy)).isFalse();
        assertThat(prefixed.isLegacyKey(SHARD, "tier/prod/" + legacy)).isTrue();
        assertThat(prefixed.isLegacyKey(SHARD, legacy)).as("outside the key prefix").isFalse();
        // named by its own manifest only, and still kept: another root's replica may name it too
        assertThat(ownership.refusal(SHARD, legacy, ownOnly)).contains(KeyOwnership.Refusal.LEGACY_KEY);
        assertThat(ownership.refusal(SHARD, legacy, LiveKeys.of(Map.of(), List.of())))
                .contains(KeyOwnership.Refusal.LEGACY_KEY);
        assertThat(ownership.refusalForDeletedShard(SHARD, legacy, LiveKeys.of(Map.of(), List.of())))
                .contains(KeyOwnership.Refusal.LEGACY_KEY);
        assertThat(ownership.mayDelete(SHARD, KEY, ownOnly)).isTrue();
        assertThat(KeyOwnership.Refusal.LEGACY_KEY.label()).isEqualTo("legacy-key");
        assertThat(ownership.underNodePrefix(KEY)).isTrue();
        assertThat(ownership.underNodePrefix(legacy)).isFalse();
    }

    @Test
    void theShardDirectoryAKeyLiesInComesFromItsPath() {
        assertThat(KeyOwnership.shardDirectoryOf(KEY)).contains(SHARD);
        assertThat(KeyOwnership.shardDirectoryOf(SHARD + "/x.segment")).contains(SHARD);
        assertThat(KeyOwnership.shardDirectoryOf("x.segment")).isEmpty();
    }
}
