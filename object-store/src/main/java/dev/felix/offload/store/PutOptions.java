package dev.felix.offload.store;

import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * Options of one put.
 *
 * @param crc32 the CRC32 of the body when the caller knows it; the store sends it along (or checks
 *     it) so a body that changed since is refused with {@link IntegrityRejectedException} where
 *     the store declares {@link StoreCapability#CRC32_VERIFIED_ON_PUT}
 * @param createOnly when true the put succeeds only if the key does not exist yet
 * @param headFirst with {@code createOnly}: where the server ignores {@code If-None-Match}, head the
 *     key first and refuse the put if it exists, instead of refusing the put outright. Another writer
 *     could still slip in between the head and the put, so this suits keys that only one writer
 *     ever means to create (a shard's segment keys), where it catches a stale or foreign object
 * @param listedAbsent with {@code headFirst}: the caller listed the key's prefix while it was the only
 *     writer meant to create keys under it, and the key was not there, so the head before a
 *     single-request put would only repeat that answer and is skipped. The window between that
 *     listing and the put is the same kind of window as between a head and the put, only longer;
 *     a body that goes in parts is still headed (the head costs little beside the parts)
 * @param userMetadata small string pairs stored with the object; names are lower-cased, and must
 *     be ASCII letters, digits and {@code -}, not beginning {@value #RESERVED_METADATA_PREFIX}
 *     (the stores keep their own entries under such names); values printable ASCII
 */
public record PutOptions(OptionalLong crc32, boolean createOnly, boolean headFirst, boolean listedAbsent,
                         Map<String, String> userMetadata) {
    /** User metadata names beginning with this are the stores' own. */
    public static final String RESERVED_METADATA_PREFIX = "felix-";

    private static final PutOptions DEFAULTS = new PutOptions(OptionalLong.empty(), false, false, false, Map.of());

    public PutOptions {
        if (headFirst && !createOnly) {
            throw new IllegalArgumentException("headFirst only applies to a create-only put");
        }
        if (listedAbsent && !headFirst) {
            throw new IllegalArgumentException("listedAbsent only applies to a put that heads the key first");
        }
        if (crc32.isPresent() && (crc32.getAsLong() < 0 || crc32.getAsLong() > 0xFFFF_FFFFL)) {
            throw new IllegalArgumentException("crc32 must be an unsigned 32-bit value: " + crc32.getAsLong());
        }
        TreeMap<String, String> normalised = new TreeMap<>();
        for (Map.Entry<String, String> e : userMetadata.entrySet()) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            if (name.isEmpty() || !name.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
                throw new IllegalArgumentException("user metadata name must be ASCII letters, digits or '-': '" + e.getKey() + "'");
            }
            if (name.startsWith(RESERVED_METADATA_PREFIX)) {
                throw new IllegalArgumentException("user metadata names beginning '" + RESERVED_METADATA_PREFIX
                        + "' are reserved for the stores: '" + e.getKey() + "'");
            }
            String value = e.getValue();
            if (!value.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
                throw new IllegalArgumentException("user metadata value of '" + name + "' must be printable ASCII");
            }
            normalised.put(name, value);
        }
        userMetadata = Map.copyOf(normalised);
    }

    public static PutOptions defaults() {
        return DEFAULTS;
    }

    public PutOptions withCrc32(long value) {
        return new PutOptions(OptionalLong.of(value), createOnly, headFirst, listedAbsent, userMetadata);
    }

    /** Create-only, refused with {@link CapabilityMissingException} where the server ignores {@code If-None-Match}. */
    public PutOptions withCreateOnly(boolean value) {
        return new PutOptions(crc32, value, value && headFirst, value && listedAbsent, userMetadata);
    }

    /**
     * Never replaces an existing object: create-only where the store can do that, a head before the
     * put where the server ignores {@code If-None-Match}. Either way an existing key fails the put
     * with {@link PreconditionFailedException}.
     */
    public PutOptions withNoReplace() {
        return new PutOptions(crc32, true, true, listedAbsent, userMetadata);
    }

    /**
     * {@link #withNoReplace()}, for a key the caller's own listing showed absent (see
     * {@code listedAbsent}): where the server ignores {@code If-None-Match}, a single-request put goes
     * without the head before it.
     */
    public PutOptions withNoReplaceListedAbsent() {
        return new PutOptions(crc32, true, true, true, userMetadata);
    }

    public PutOptions withUserMetadata(Map<String, String> value) {
        return new PutOptions(crc32, createOnly, headFirst, listedAbsent, value);
    }
}
