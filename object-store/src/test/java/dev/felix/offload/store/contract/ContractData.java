package dev.felix.offload.store.contract;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/** Test bodies: one 64 MiB file of seeded random bytes, written once per JVM and shared. */
public final class ContractData {
    public static final int BIG_SIZE = 64 * 1024 * 1024;
    private static Path big;
    private static long bigCrc;

    private ContractData() {}

    public static synchronized Path bigFile() {
        if (big == null) {
            try {
                Path dir = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")).resolve("felix-contract"));
                Path file = dir.resolve("big-" + ProcessHandle.current().pid() + ".bin");
                Path temp = Files.createTempFile(dir, "big", ".tmp");
                SplittableRandom random = new SplittableRandom(0x5EED);
                CRC32 crc = new CRC32();
                byte[] chunk = new byte[1 << 20];
                try (OutputStream out = Files.newOutputStream(temp)) {
                    for (int i = 0; i < BIG_SIZE / chunk.length; i++) {
                        random.nextBytes(chunk);
                        crc.update(chunk);
                        out.write(chunk);
                    }
                }
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
                file.toFile().deleteOnExit();
                big = file;
                bigCrc = crc.getValue();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return big;
    }

    public static synchronized long bigCrc32() {
        bigFile();
        return bigCrc;
    }

    public static byte[] bytes(int size, long seed) {
        byte[] out = new byte[size];
        new SplittableRandom(seed).nextBytes(out);
        return out;
    }

    public static long crc32(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return crc.getValue();
    }
}
