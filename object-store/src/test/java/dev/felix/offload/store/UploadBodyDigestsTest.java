package dev.felix.offload.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.contract.ContractData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A body's digests: taken in one read, or the caller's, which spare the store that read. */
class UploadBodyDigestsTest {
    @TempDir
    Path tmp;

    @Test
    void precomputedDigestsThatFitAreUsedWithoutReadingTheBody() throws Exception {
        Path file = tmp.resolve("body");
        Files.write(file, ContractData.bytes(100_000, 3));
        BodyDigests taken = UploadBody.ofFile(file).digests(30_000);
        assertThat(taken.partCount()).isEqualTo(4);
        UploadBody body = UploadBody.ofFile(file).withDigests(taken);
        Files.delete(file); // any read now fails
        assertThat(body.digests(30_000)).isSameAs(taken);
        assertThatThrownBy(() -> body.digests(50_000)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> UploadBody.ofBytes(new byte[10]).withDigests(taken))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSingleSliceIsTheWholeBodysMd5() throws Exception {
        byte[] bytes = ContractData.bytes(5000, 4);
        BodyDigests d = UploadBody.ofBytes(bytes).digests(5000);
        assertThat(d.fits(1_000_000)).isTrue();
        assertThat(d.md5Etag(false)).isEqualTo(java.util.HexFormat.of().formatHex(BodyDigests.md5().digest(bytes)));
        assertThat(d.crc32()).isEqualTo(ContractData.crc32(bytes));
    }

    @Test
    void digestsWithoutMd5sServeCrcOnlyRequestsButNotOnesForMd5s() throws Exception {
        byte[] bytes = ContractData.bytes(70_000, 5);
        BodyDigests crcOnly = UploadBody.ofBytes(bytes).digests(30_000, false);
        assertThat(crcOnly.hasMd5s()).isFalse();
        assertThat(crcOnly.partCrc32s()).isEqualTo(UploadBody.ofBytes(bytes).digests(30_000).partCrc32s());
        assertThatThrownBy(() -> crcOnly.contentMd5(0)).isInstanceOf(IllegalStateException.class);
        UploadBody body = UploadBody.ofBytes(bytes).withDigests(crcOnly);
        assertThat(body.digests(30_000, false)).isSameAs(crcOnly);
        BodyDigests withMd5s = body.digests(30_000, true);
        assertThat(withMd5s.hasMd5s()).isTrue();
        assertThat(withMd5s.contentMd5(2)).isEqualTo(java.util.Base64.getEncoder().encodeToString(
                BodyDigests.md5().digest(java.util.Arrays.copyOfRange(bytes, 60_000, 70_000))));
    }
}
