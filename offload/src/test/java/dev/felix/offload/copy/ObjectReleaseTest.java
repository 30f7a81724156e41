package dev.felix.offload.copy;

import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one rule for deleting an object, on offsets held, expiry, a deleted stream and an operator's word. */
class ObjectReleaseTest {

    private static final String SHARD = "acme_default_orders_0-0123456789abcdef";
    private final SegmentKeys keys = new SegmentKeys("", "n1");
    private final KeyOwnership ownership = new KeyOwnership(keys);

    private static HeldOffsets.Range local(long first, long last) {
        return new HeldOffsets.Range(first, last, HeldOffsets.Source.LOCAL);
    }

    private static HeldOffsets.Range entries(long first, long last) {
        return new HeldOffsets.Range(first, last, HeldOffsets.Source.ENTRIES);
    }

    private static ManifestEntry entry(long id, long base, long last) {
        return new ManifestEntry(id, base, last, 100, 1, 2, 7, "n1/" + SHARD + "/" + String.format("%020d-%020d.segment",
                base, id));
    }

    @Test
    void anObjectGoesOnlyWhenEveryOffsetItHoldsIsHeldElsewhere() {
        ObjectRelease release = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of()));
        HeldOffsets held = HeldOffsets.of(List.of(local(200, 499)), List.of(entries(0, 99), entries(100, 199)));
        String key = keys.segmentKey(SHARD, 150, 9);

        assertThat(release.heldElsewhere(SHARD, key, 150, 350, held)).isInstanceOf(ObjectRelease.Verdict.Deletable.class);
        assertThat(release.heldElsewhere(SHARD, key, 450, 520, held)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> {
                    assertThat(k.reason()).isEqualTo(ObjectRelease.KeptReason.UNRECORDED_HISTORY);
                    assertThat(k.detail()).contains("first not held: 500");
                });
        HeldOffsets hole = HeldOffsets.of(List.of(local(300, 499)), List.of(entries(0, 99)));
        assertThat(release.heldElsewhere(SHARD, key, 100, 199, hole)).isInstanceOf(ObjectRelease.Verdict.Kept.class);
        assertThat(hole.firstNotHeld(50, 350)).isEqualTo(100L);
        assertThat(hole.holdsLocally(300, 499)).isTrue();
    }

    @Test
    void anIndexGoesWithItsSegmentOrAloneAndStaysWithAKeptOne() {
        ObjectRelease release = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of()));
        String segment = keys.segmentKey(SHARD, 600, 9);
        String index = SegmentKeys.indexKeyFor(segment);
        ObjectRelease.Verdict kept = release.heldElsewhere(SHARD, segment, 600, 700,
                HeldOffsets.of(List.of(local(0, 10)), List.of()));
        assertThat(release.index(SHARD, index, kept)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.reason()).isEqualTo(ObjectRelease.KeptReason.SEGMENT_KEPT));
        assertThat(release.index(SHARD, index, null)).isInstanceOfSatisfying(ObjectRelease.Verdict.Deletable.class,
                d -> assertThat(d.permit().grounds()).isEqualTo(ObjectRelease.Grounds.HOLDS_NO_RECORDS));
    }

    @Test
    void aKeyAnotherManifestNamesOrOutsideTheShardsPrefixOrWhileAManifestIsUnreadableStays() {
        String key = keys.segmentKey(SHARD, 150, 9);
        HeldOffsets all = HeldOffsets.of(List.of(local(0, 1000)), List.of());
        ObjectRelease named = new ObjectRelease(ownership, LiveKeys.of(Map.of(key, Set.of("other-shard")), List.of()));
        assertThat(named.heldElsewhere(SHARD, key, 150, 200, all)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD));
        ObjectRelease unreadable = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of("broken")));
        assertThat(unreadable.heldElsewhere(SHARD, key, 150, 200, all)).isInstanceOfSatisfying(
                ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE));
        ObjectRelease release = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of()));
        assertThat(release.heldElsewhere(SHARD, "n2/" + SHARD + "/x.segment", 150, 200, all))
                .isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                        k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX));
    }

    @Test
    void expiryMustBeWhatTheSavedManifestSays() {
        ObjectRelease release = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of()));
        ManifestEntry a = entry(0, 0, 99);
        ManifestEntry b = entry(1, 100, 199);
        Manifest before = Manifest.of(List.of(a, b));
        Manifest after = before.withoutEntriesThrough(99);
        assertThat(release.expired(SHARD, a.objectKey(), a, before, after)).isInstanceOfSatisfying(
                ObjectRelease.Verdict.Deletable.class, d -> assertThat(d.permit().grounds())
                        .isEqualTo(ObjectRelease.Grounds.EXPIRED));
        assertThatThrownBy(() -> release.expired(SHARD, b.objectKey(), b, before, after))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> release.expired(SHARD, a.objectKey(), a, before, before))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aKeyWithoutANodeIdGoesOnlyWhenAnOperatorNamesItAndNoManifestOfTheRootDoes() {
        String legacy = SHARD + "/" + String.format("%020d-%020d.segment", 150, 9);
        HeldOffsets all = HeldOffsets.of(List.of(local(0, 1000)), List.of());
        ObjectRelease release = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of()));
        // every side-effect delete keeps it: another replica of the shard may still name it
        assertThat(release.heldElsewhere(SHARD, legacy, 150, 200, all)).isInstanceOfSatisfying(
                ObjectRelease.Verdict.Kept.class, k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.LEGACY_KEY));
        assertThat(release.expiredEarlier(SHARD, legacy)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.LEGACY_KEY));
        assertThat(release.streamDeleted(SHARD, legacy)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.LEGACY_KEY));
        assertThat(release.namedByOperator(SHARD, legacy)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.LEGACY_KEY));
        // the operator's naming lifts that refusal, and only that one
        assertThat(release.legacyKeyNamedByOperator(SHARD, legacy)).isInstanceOfSatisfying(
                ObjectRelease.Verdict.Deletable.class,
                d -> assertThat(d.permit().grounds()).isEqualTo(ObjectRelease.Grounds.NAMED_BY_OPERATOR));
        ObjectRelease named = new ObjectRelease(ownership, LiveKeys.of(Map.of(legacy, Set.of(SHARD)), List.of()));
        assertThat(named.legacyKeyNamedByOperator(SHARD, legacy)).isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD));
        ObjectRelease unreadable = new ObjectRelease(ownership, LiveKeys.of(Map.of(), List.of("broken")));
        assertThat(unreadable.legacyKeyNamedByOperator(SHARD, legacy)).isInstanceOfSatisfying(
                ObjectRelease.Verdict.Kept.class,
                k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE));
        // never a key of this node, another node's, or a former node's
        for (String key : List.of(keys.segmentKey(SHARD, 150, 9), "n2/" + SHARD + "/x.segment", "n1/node.claim")) {
            assertThat(release.legacyKeyNamedByOperator(SHARD, key)).as(key).isInstanceOfSatisfying(
                    ObjectRelease.Verdict.Kept.class,
                    k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX));
        }
        ObjectRelease reidentified = new ObjectRelease(new KeyOwnership(new SegmentKeys("", "n3"), List.of("n1")),
                LiveKeys.of(Map.of(), List.of()));
        assertThat(reidentified.legacyKeyNamedByOperator(SHARD, keys.segmentKey(SHARD, 150, 9)))
                .isInstanceOfSatisfying(ObjectRelease.Verdict.Kept.class,
                        k -> assertThat(k.refusal()).isEqualTo(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX));
    }
}
