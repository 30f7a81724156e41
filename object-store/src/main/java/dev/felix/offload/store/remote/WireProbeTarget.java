package dev.felix.offload.store.remote;

import static dev.felix.offload.store.remote.ResponseChecks.unquote;

import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.UploadBody;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The raw operations a {@code RemoteStore}'s capability probe sends ({@link CapabilityProbe.Target}),
 * on full keys and through the store's own {@link WireCalls}: the probe's requests are retried and
 * stopped as the store's are.
 */
final class WireProbeTarget implements CapabilityProbe.Target {

    /** A delete of one full key, a key the server reports missing counting as deleted. */
    @FunctionalInterface
    interface FullKeyDelete {
        void delete(String fullKey) throws StoreException;
    }

    private final WireCalls calls;
    private final S3Wire wire;
    private final Map<String, String> uploadHeaders;
    private final FullKeyDelete delete;

    /** @param uploadHeaders the headers every upload carries (encryption, storage class) */
    WireProbeTarget(WireCalls calls, S3Wire wire, Map<String, String> uploadHeaders, FullKeyDelete delete) {
        this.calls = calls;
        this.wire = wire;
        this.uploadHeaders = uploadHeaders;
        this.delete = delete;
    }

        @Override
        public String put(String fullKey, byte[] body, OptionalLong crc32, Optional<String> contentMd5,
                boolean createOnly) throws StoreException {
            S3Wire.Upload upload = new S3Wire.Upload(uploadHeaders, Map.of(), crc32, contentMd5, createOnly);
            return unquote(calls.call("probe put", fullKey, WireCalls.BodyDigest.of(upload.carriesDigest()),
                    () -> wire.putObject(fullKey, UploadBody.ofBytes(body), upload)));
        }

        @Override
        public OptionalLong storedCrc32(String fullKey) throws StoreException {
            S3Wire.Head r = calls.call("probe head", fullKey, () -> wire.headObject(fullKey, true));
            return Crc32Text.fromBase64(r.crc32Base64());
        }

        @Override
        public void delete(String fullKey) throws StoreException {
            delete.delete(fullKey);
        }

        @Override
        public List<String> listFullKeys(String fullPrefix) throws StoreException {
            S3Wire.KeyPage page = calls.call("probe list", fullPrefix, () -> wire.listObjects(fullPrefix, null, 1000));
            return page.objects().stream().map(S3Wire.Listed::fullKey).toList();
        }

        @Override
        public Optional<byte[]> read(String fullKey) throws StoreException {
            try {
                return Optional.of(calls.call("get", fullKey, () -> {
                    S3Wire.Body in = wire.getObject(fullKey, null, false);
                    boolean complete = false;
                    try {
                        Long length = in.contentLength();
                        if (length == null || length < 0 || length > ServerFindingsFile.MAX_BYTES) {
                            throw new StoreRejectedException("get of key '" + fullKey + "' answered " + length
                                    + " bytes, not a findings file", fullKey, null, null);
                        }
                        byte[] out = new byte[length.intValue()];
                        ResponseChecks.readFully(fullKey, in.stream(), out);
                        complete = in.stream().read() < 0;
                        return out;
                    } finally {
                        ResponseChecks.release(in, complete);
                    }
                }));
            } catch (ObjectNotFoundException absent) {
                return Optional.empty();
            }
        }
}
