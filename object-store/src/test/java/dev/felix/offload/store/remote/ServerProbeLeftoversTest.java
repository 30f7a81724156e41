package dev.felix.offload.store.remote;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;

import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Probe objects a killed process left behind are deleted by a later probe; a probe running now is not
 * touched; a probe that cannot reach the server reports why, not its failed clean-up.
 */
class ServerProbeLeftoversTest {

    /** Keys in memory. */
    static final class Keys implements CapabilityProbe.Target {
        final TreeSet<String> keys = new TreeSet<>();
        final List<String> deleted = new ArrayList<>();

        @Override
        public String put(String fullKey, byte[] body, OptionalLong crc32, java.util.Optional<String> contentMd5,
                boolean createOnly) {
            keys.add(fullKey);
            return "etag";
        }

        @Override
        public OptionalLong storedCrc32(String fullKey) {
            return OptionalLong.empty();
        }

        @Override
        public void delete(String fullKey) {
            keys.remove(fullKey);
            deleted.add(fullKey);
        }

        @Override
        public List<String> listFullKeys(String fullPrefix) {
            return keys.stream().filter(k -> k.startsWith(fullPrefix)).toList();
        }
    }

    @Test
    void deletesOnlyProbesBegunBeforeTheCutoffOrWithoutAStartTime() {
        Keys target = new Keys();
        String folder = "base/.felix-probe/";
        long now = 10_000_000L;
        String old = folder + (now - 7_200_000L) + "-0b8c-a";
        String running = folder + (now - 1_000L) + "-77aa-a";
        String legacy = folder + "3f2a9c1e-5d6b-4a7e-9f00-1234567890ab-a";
        target.keys.addAll(List.of(old, running, legacy, "base/node-a/s/1.segment"));

        CapabilityProbe.deleteLeftovers(target, folder, now - CapabilityProbe.LEFTOVER_AGE.toMillis());

        assertThat(target.deleted).containsExactlyInAnyOrder(old, legacy);
        assertThat(target.keys).containsExactlyInAnyOrder(running, "base/node-a/s/1.segment");
    }

    @Test
    void anUnreachableServerIsReportedByTheFailedPutNotByTheCleanUpAfterIt() {
        List<String> attempted = new ArrayList<>();
        CapabilityProbe.Target refused = new CapabilityProbe.Target() {
            @Override
            public String put(String fullKey, byte[] body, OptionalLong crc32, java.util.Optional<String> contentMd5,
                    boolean createOnly) throws StoreException {
                throw new TransientStoreException("put of key '" + fullKey + "' failed: connection refused", fullKey,
                        StoreAnswer.NONE, null);
            }

            @Override
            public OptionalLong storedCrc32(String fullKey) {
                return OptionalLong.empty();
            }

            @Override
            public void delete(String fullKey) throws StoreException {
                attempted.add(fullKey);
                throw new TransientStoreException("delete of key '" + fullKey + "' failed: connection refused", fullKey,
                        StoreAnswer.NONE, null);
            }

            @Override
            public List<String> listFullKeys(String fullPrefix) {
                return List.of();
            }
        };

        TransientStoreException e = catchThrowableOfType(TransientStoreException.class,
                () -> CapabilityProbe.run(refused, RemoteStoreSettings.builder("bucket").build()));

        assertThat(e.getMessage()).startsWith("put of key");
        // every probe object is deleted again: five, since the checksum mode is auto
        assertThat(attempted).hasSize(5);
        assertThat(e.getSuppressed()).hasSize(5)
                .allSatisfy(s -> assertThat(s.getMessage()).startsWith("delete of key"));
    }
}
