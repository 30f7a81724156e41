package dev.felix.offload.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.contract.ContractData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file body's streams, read as an HTTP client copies them: a few KiB at a time. */
class UploadBodyStreamTest {
    @TempDir
    Path tmp;

    private static byte[] copyInSteps(InputStream in, int step) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[step];
        for (int n; (n = in.read(buf)) >= 0; ) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    @Test
    void aSliceReadInSmallStepsIsExactlyItsBytesWhateverTheReadAhead() throws Exception {
        byte[] bytes = ContractData.bytes(3 * UploadBody.READ_CHUNK + 777, 8);
        Path file = Files.write(tmp.resolve("body"), bytes);
        Path framed = Files.write(tmp.resolve("framed"), concat(new byte[100], bytes, new byte[5000]));
        UploadBody whole = UploadBody.ofFile(file);
        UploadBody inside = UploadBody.ofFileRange(framed, 100, bytes.length);
        for (UploadBody body : new UploadBody[] {whole, inside}) {
            for (int step : new int[] {1, 4096, UploadBody.READ_CHUNK + 1}) {
                try (InputStream in = body.open()) {
                    assertThat(copyInSteps(in, step)).isEqualTo(bytes);
                }
            }
            long from = UploadBody.READ_CHUNK - 3;
            try (InputStream in = body.open(from, 10_000)) {
                assertThat(copyInSteps(in, 4096)).isEqualTo(Arrays.copyOfRange(bytes, (int) from, (int) from + 10_000));
            }
            try (InputStream in = body.open(bytes.length, 0)) {
                assertThat(in.read()).isEqualTo(-1);
            }
        }
    }

    @Test
    void aFileCutShortUnderAnOpenBodyIsAnErrorNotAShortBody() throws Exception {
        byte[] bytes = ContractData.bytes(2 * UploadBody.READ_CHUNK, 9);
        Path file = Files.write(tmp.resolve("body"), bytes);
        UploadBody body = UploadBody.ofFile(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(UploadBody.READ_CHUNK + 10);
        }
        try (InputStream in = body.open()) {
            assertThatThrownBy(() -> copyInSteps(in, 4096)).isInstanceOf(IOException.class)
                    .hasMessageContaining("before the upload body's end");
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
