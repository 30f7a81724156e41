package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** Round trips of the codec over generated manifests. */
class ManifestCodecPropertiesTest {

    private static final CorruptionSite SITE = CorruptionSite.inFile("prop", ManifestStore.FILE_NAME, 0);

    @Provide
    Arbitrary<Manifest> manifests() {
        return ManifestArbitraries.manifests(30);
    }

    @Property(tries = 500)
    void decodingTheEncodingGivesBackTheSameManifest(@ForAll("manifests") Manifest m) throws CorruptionException {
        byte[] bytes = ManifestCodec.encode(m);
        Manifest back = ManifestCodec.decode(ByteBuffer.wrap(bytes), SITE);
        assertThat(back).isEqualTo(m);
        assertThat(back.entries()).containsExactlyElementsOf(m.entries());
        assertThat(back.totals()).isEqualTo(m.totals());
    }

    @Property(tries = 500)
    void theEncodingIsCanonical(@ForAll("manifests") Manifest m) throws CorruptionException {
        byte[] bytes = ManifestCodec.encode(m);
        assertThat(ManifestCodec.encode(ManifestCodec.decode(ByteBuffer.wrap(bytes), SITE))).containsExactly(bytes);
    }

    @Property(tries = 500)
    void theLengthIsTheHeaderTheEntriesAndTheCrc(@ForAll("manifests") Manifest m) {
        long expected = ManifestCodec.MIN_LENGTH;
        for (ManifestEntry e : m.entries()) {
            expected += ManifestCodec.ENTRY_FIXED_LENGTH + e.objectKey().getBytes(StandardCharsets.UTF_8).length;
        }
        byte[] bytes = ManifestCodec.encode(m);
        assertThat(bytes).hasSize((int) expected);
        assertThat(ByteBuffer.wrap(bytes).getInt(ManifestCodec.COUNT_OFFSET)).isEqualTo(m.size());
    }
}
