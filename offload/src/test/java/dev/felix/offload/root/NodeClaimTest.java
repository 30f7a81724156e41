package dev.felix.offload.root;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeClaimTest {

    private static final String ROOT_ID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    private static final NodeClaim CLAIM = new NodeClaim(ROOT_ID, "broker", "broker-7", "/var/lib/felix",
            Instant.parse("2026-12-01T18:00:00Z"));
    private static final String GOLDEN = """
            felix-offload node claim 1
            root-id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0
            node-id: broker
            host: broker-7
            root: /var/lib/felix
            created: 2026-12-01T18:00:00Z
            """;

    @Test
    void encodesToTheDocumentedBytes() {
        assertThat(new String(CLAIM.encode(), StandardCharsets.UTF_8)).isEqualTo(GOLDEN);
        assertThat(CLAIM.encode()).isEqualTo(GOLDEN.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void decodesWhatItEncodes() throws Exception {
        assertThat(NodeClaim.decode(GOLDEN.getBytes(StandardCharsets.UTF_8))).isEqualTo(CLAIM);
    }

    @Test
    void skipsFieldsALaterVersionAdds() throws Exception {
        String later = GOLDEN + "pid: 4711\n";
        assertThat(NodeClaim.decode(later.getBytes(StandardCharsets.UTF_8))).isEqualTo(CLAIM);
    }

    @Test
    void aLineBreakInAHostOrPathCannotEndTheFieldEarly() throws Exception {
        NodeClaim odd = new NodeClaim(ROOT_ID, "broker", "evil\nroot-id: ffffffffffffffffffffffffffffffff", "/a\r/b",
                Instant.parse("2026-12-01T18:00:00Z"));
        NodeClaim back = NodeClaim.decode(odd.encode());
        assertThat(back.rootId()).isEqualTo(ROOT_ID);
        assertThat(back.host()).isEqualTo("evil?root-id: ffffffffffffffffffffffffffffffff");
        assertThat(back.root()).isEqualTo("/a?/b");
    }

    @Test
    void refusesWhatIsNotAClaim() {
        assertUnreadable("felix-offload node claim 2\nroot-id: " + ROOT_ID + "\n", "first line");
        assertUnreadable(GOLDEN.substring(0, GOLDEN.length() - 1), "truncated");
        assertUnreadable("felix-offload node claim 1\nnode-id: broker\n", "no root-id");
        assertUnreadable("felix-offload node claim 1\nroot-id: 0F1E2D3C4B5A69788796A5B4C3D2E1F0\n", "root-id");
        assertUnreadable("felix-offload node claim 1\nroot-id: " + ROOT_ID + "\nroot-id: " + ROOT_ID + "\n", "twice");
        assertUnreadable("felix-offload node claim 1\nroot-id " + ROOT_ID + "\n", "line 2");
        assertUnreadable(GOLDEN.replace("2026-12-01T18:00:00Z", "yesterday"), "created");
        assertThatThrownBy(() -> NodeClaim.decode(new byte[] {(byte) 0xC3, 0x28}))
                .isInstanceOf(NodeClaim.UnreadableClaimException.class).hasMessageContaining("UTF-8");
        assertThatThrownBy(() -> NodeClaim.decode(new byte[NodeClaim.MAX_BYTES + 1]))
                .isInstanceOf(NodeClaim.UnreadableClaimException.class).hasMessageContaining("larger");
    }

    private static void assertUnreadable(String body, String says) {
        assertThatThrownBy(() -> NodeClaim.decode(body.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(NodeClaim.UnreadableClaimException.class).hasMessageContaining(says);
    }

    @Test
    void theClaimKeyIsOneNoSegmentOrShardCanTake() {
        SegmentKeys keys = new SegmentKeys("tiered", "broker");
        String key = NodeClaim.keyFor(keys);
        assertThat(key).isEqualTo("tiered/broker/node.claim");
        assertThat(NodeClaim.isClaimKey(keys.nodePrefix(), key)).isTrue();
        // a segment key always lies under a shard's directory, one level below the claim
        assertThat(new KeyOwnership(keys).shardOf(key)).isEmpty();
        assertThat(NodeClaim.isClaimKey(keys.nodePrefix(), keys.shardPrefix("node.claim") + "x.segment")).isFalse();
    }
}
