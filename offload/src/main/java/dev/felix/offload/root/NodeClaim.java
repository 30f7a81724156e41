package dev.felix.offload.root;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The claim object a data root writes under its node's prefix, {@code [prefix/]<node id>/}{@value #NAME},
 * saying which root offloads under that node id into this store. No segment or index key can take
 * the name: those lie one level deeper, under a shard's directory name, and shard names never hold a
 * dot (the spec excludes dots from them).
 *
 * <p>The body is small UTF-8 text, one {@code name: value} per line after a first line naming the
 * format and its version:
 * <pre>
 * felix-offload node claim 1
 * root-id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0
 * node-id: broker
 * host: broker-7
 * root: /var/lib/felix
 * created: 2026-12-01T18:00:00Z
 * </pre>
 * Text rather than a binary codec because an operator reads it with {@code aws s3 cp ... -} when
 * two brokers fight over a node id, and nothing reads it on a hot path; it carries no checksum of
 * its own since the store's upload checksum covers it in transit and only {@code root-id} decides
 * anything (a damaged one reads as another root's, which refuses writes: the safe side). Fields
 * after {@code root-id} are information for the operator; unknown names are skipped so a later
 * version may add some, and a different first line is refused.
 *
 * @param rootId  the holder's {@link OffloadRootId}, the only field that decides anything
 * @param nodeId  the node id the claim is for
 * @param host    the holder's host name when it wrote the claim
 * @param root    the holder's data root path
 * @param created when the claim was written
 */
public record NodeClaim(String rootId, String nodeId, String host, String root, Instant created) {

    /** The claim's object name under the node prefix. */
    public static final String NAME = "node.claim";
    /** The first line of every claim this version writes. */
    static final String MAGIC = "felix-offload node claim 1";
    /** A claim is a few hundred bytes; anything larger is not one. */
    public static final int MAX_BYTES = 8192;

    public NodeClaim {
        Objects.requireNonNull(rootId, "rootId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(created, "created");
        if (!OffloadRootId.valid(rootId)) {
            throw new IllegalArgumentException("not an offload root id: " + rootId);
        }
    }

    /** The claim's key for a node's key layout. */
    public static String keyFor(SegmentKeys keys) {
        return keys.nodePrefix() + NAME;
    }

    /**
     * Whether {@code key} is the claim of the node whose prefix is {@code nodePrefix}, or one of its
     * leases ({@link NodeLease}): the node's own bookkeeping, never an orphan, never a segment.
     */
    public static boolean isClaimKey(String nodePrefix, String key) {
        return key.equals(nodePrefix + NAME) || NodeLease.isLeaseKey(nodePrefix, key);
    }

    /** A claim body that cannot be read, saying why. */
    public static final class UnreadableClaimException extends Exception {
        private static final long serialVersionUID = 1L;

        UnreadableClaimException(String message) {
            super(message);
        }
    }

    /** One line describing the holder, for messages. */
    public String describeHolder() {
        return "root id " + rootId + " on host " + host + " at " + root + ", claimed " + created;
    }

    public byte[] encode() {
        StringBuilder b = new StringBuilder(MAGIC).append('\n');
        b.append("root-id: ").append(rootId).append('\n');
        b.append("node-id: ").append(oneLine(nodeId)).append('\n');
        b.append("host: ").append(oneLine(host)).append('\n');
        b.append("root: ").append(oneLine(root)).append('\n');
        b.append("created: ").append(created).append('\n');
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Information fields are free text from the holder's machine; a line break would end them early. */
    private static String oneLine(String value) {
        StringBuilder b = new StringBuilder(value.length());
        value.codePoints().forEach(cp -> b.appendCodePoint(Character.isISOControl(cp) ? '?' : cp));
        return b.toString();
    }

    public static NodeClaim decode(byte[] body) throws UnreadableClaimException {
        if (body.length > MAX_BYTES) {
            throw new UnreadableClaimException(body.length + " bytes, larger than any claim (" + MAX_BYTES + ")");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw new UnreadableClaimException("not UTF-8 text");
        }
        String[] lines = text.split("\n", -1);
        if (!lines[0].equals(MAGIC)) {
            throw new UnreadableClaimException("first line is not '" + MAGIC + "'");
        }
        if (!text.endsWith("\n")) {
            throw new UnreadableClaimException("truncated: the last line has no line break");
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 1; i < lines.length - 1; i++) {
            int colon = lines[i].indexOf(": ");
            if (colon <= 0) {
                throw new UnreadableClaimException("line " + (i + 1) + " is not 'name: value'");
            }
            String name = lines[i].substring(0, colon);
            if (fields.putIfAbsent(name, lines[i].substring(colon + 2)) != null) {
                throw new UnreadableClaimException("field '" + name + "' given twice");
            }
        }
        String rootId = fields.get("root-id");
        if (rootId == null || !OffloadRootId.valid(rootId)) {
            throw new UnreadableClaimException(rootId == null ? "no root-id" : "root-id is not 32 lower-case hex digits");
        }
        Instant created;
        try {
            created = Instant.parse(fields.getOrDefault("created", "1970-01-01T00:00:00Z"));
        } catch (DateTimeParseException e) {
            throw new UnreadableClaimException("created is not an ISO-8601 instant");
        }
        return new NodeClaim(rootId, fields.getOrDefault("node-id", "?"), fields.getOrDefault("host", "?"),
                fields.getOrDefault("root", "?"), created);
    }
}
