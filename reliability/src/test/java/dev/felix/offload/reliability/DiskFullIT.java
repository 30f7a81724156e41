package dev.felix.offload.reliability;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Slice 4: the disk fills up while the manifest is replaced; the old manifest must survive whole.
 *
 * <p>Where the machine allows it (root, and {@code mount -t tmpfs} works), the data root lives on a
 * 4 MiB tmpfs that the test fills to the last page, so the manifest's temporary cannot be written
 * (ENOSPC), both through {@link ManifestStore} directly and under a whole pass of the real process;
 * the tmpfs is unmounted afterwards. Elsewhere that test is skipped, saying why. A second test
 * needs no privilege: the real process runs under {@code ulimit -f} (RLIMIT_FSIZE, the JVM ignores
 * SIGXFSZ so the write fails with EFBIG), so the manifest cannot grow past a few KiB while the pass
 * records segment after segment. Neither needs a seam in DurableFiles.
 */
class DiskFullIT {

    private static final long PAGE = 4096;

    /** Mounts a tmpfs of {@code size} at {@code dir}; false (nothing mounted) where the machine does not allow it. */
    private static boolean mountTmpfs(Path dir, String size) throws IOException, InterruptedException {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            return false;
        }
        Files.createDirectories(dir);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "tmpfs",
                dir.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return false;
        }
        if (p.exitValue() != 0) {
            System.out.println("disk-full test: no tmpfs here (" + out.trim() + ")");
            return false;
        }
        return true;
    }

    private static void unmount(Path dir) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("umount", dir.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            new ProcessBuilder("umount", "-l", dir.toString()).start().waitFor(60, TimeUnit.SECONDS);
        }
    }

    private static int fillers;

    /**
     * Fills the file system of {@code dir} to its last byte with new files named filler-N: one
     * written in 64 KiB chunks, one in pages, one in bytes, each until ENOSPC. Answers them in that order.
     */
    private static List<Path> fill(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        for (int size : new int[] {64 * 1024, (int) PAGE, 1}) {
            byte[] chunk = new byte[size];
            Path f = dir.resolve("filler-" + fillers++);
            files.add(f);
            try (OutputStream out = Files.newOutputStream(f, StandardOpenOption.CREATE_NEW)) {
                while (true) {
                    out.write(chunk);
                }
            } catch (IOException full) {
                if (!Files.exists(f)) {
                    throw full; // not the disk filling up
                }
            }
        }
        return files;
    }

    private static long sizeOf(List<Path> files) throws IOException {
        long n = 0;
        for (Path f : files) {
            n += Files.size(f);
        }
        return n;
    }

    private static void unfill(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().startsWith("filler-")) {
                    Files.delete(f);
                }
            }
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void theOldManifestSurvivesWholeWhenTheDiskFillsDuringItsReplacement() throws Exception {
        Path mnt = Props.work().resolve("diskfull").resolve("tmpfs");
        Assumptions.assumeTrue(mountTmpfs(mnt, "4m"), "mounting a tmpfs needs root and a kernel that allows it");
        List<String> report = new ArrayList<>();
        try {
            // 1. ManifestStore.save itself on a full disk: an exception, and the file as it was.
            Path shard = Files.createDirectories(mnt.resolve("manifest-only"));
            ManifestStore store = ManifestStore.open(shard);
            Manifest m = Manifest.empty();
            for (int i = 0; i < 40; i++) {
                m = m.withEntry(entry(i));
            }
            store.save(m);
            byte[] old = Files.readAllBytes(ManifestStore.fileIn(shard));
            Manifest bigger = m;
            for (int i = 40; i < 120; i++) {
                bigger = bigger.withEntry(entry(i));
            }
            List<Path> filler = fill(mnt);
            long filled = sizeOf(filler);
            Manifest next = bigger;
            assertThatThrownBy(() -> store.save(next)).isInstanceOf(IOException.class)
                    // What an operator reads names the file written (so the filesystem) and the cause.
                    .satisfies(e -> assertThat(dev.felix.offload.log.IoProblem.describe((IOException) e))
                            .startsWith(shard.toString()).containsIgnoringCase("no space left on device"));
            assertThat(Files.readAllBytes(ManifestStore.fileIn(shard))).as("the manifest file after a save that hit ENOSPC")
                    .isEqualTo(old);
            assertThat(ManifestStore.read(shard)).isEqualTo(m);
            assertThat(store.manifest()).isEqualTo(m);
            // One page free: the temporary is partly written when the disk fills.
            unfillOnePage(filler);
            assertThatThrownBy(() -> store.save(next)).isInstanceOf(IOException.class);
            assertThat(Files.readAllBytes(ManifestStore.fileIn(shard))).isEqualTo(old);
            unfill(mnt);
            store.save(next);
            assertThat(ManifestStore.read(shard)).isEqualTo(next);
            report.add(String.format("disk full (tmpfs 4 MiB, %d bytes of filler): ManifestStore.save of 120 entries "
                    + "over 40 failed with no page free and with one page free; the old manifest stayed byte for byte; "
                    + "the save succeeded once space returned", filled));

            // 2. A whole pass of the real process with the disk full: it fails, every manifest is as it was.
            Path dir = Files.createDirectories(Props.work().resolve("diskfull").resolve("store"));
            CrashCampaign.deleteTree(dir);
            StoreTarget fs = StoreTarget.filesystem(dir.resolve("objects"));
            try (TestRoot root = new TestRoot(dir.resolve("pass"), mnt.resolve("pass"), 2, fs, fs,
                    Props.seed("diskfull"))) {
                root.append(300);
                Felix.Result first = root.passInside(); // the setup: no process needed
                assertThat(first.exit()).as(first.describe()).isZero();
                root.append(300);
                Map<String, String> before = manifests(root);
                fill(mnt);
                Felix.Result full = root.pass();
                assertThat(full.exit()).as("a pass on a full disk: %s", full.describe()).isNotZero();
                assertThat(full.err() + full.out()).containsIgnoringCase("space");
                assertThat(manifests(root)).as("manifests after the pass on a full disk").isEqualTo(before);
                root.check("after a pass on a full disk");
                unfill(mnt);
                Felix.Result after = root.passInside(); // the recovery, checked on disk
                assertThat(after.exit()).as(after.describe()).isZero();
                root.check("after the disk had room again");
                root.sweep("disk full");
                report.add("disk full: a pass of the real process with the data root's tmpfs full exited " + full.exit()
                        + " naming the lack of space; every manifest byte for byte as before; the next pass completed");
            }
        } finally {
            unmount(mnt);
        }
        write(report);
    }

    /** Frees exactly one page of what {@link #fill} wrote: the byte-sized filler goes, and one page of another. */
    private static void unfillOnePage(List<Path> filler) throws IOException {
        Files.delete(filler.get(2));
        Path pages = Files.size(filler.get(1)) >= PAGE ? filler.get(1) : filler.get(0);
        try (var ch = java.nio.channels.FileChannel.open(pages, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - PAGE);
        }
    }

    /** Each shard's manifest file as Base64 ("absent" when there is none), by shard. */
    private static Map<String, String> manifests(TestRoot root) throws IOException {
        Map<String, String> out = new java.util.TreeMap<>();
        for (ShardWriter w : root.shards) {
            Path m = ManifestStore.fileIn(w.dir());
            out.put(w.name(), Files.exists(m) ? java.util.Base64.getEncoder().encodeToString(Files.readAllBytes(m))
                    : "absent");
        }
        return out;
    }

    private static ManifestEntry entry(int i) {
        long base = i * 100L;
        return new ManifestEntry(i, base, base + 99, 12_000, 1_000_000L + i, 2_000_000L + i, 0x1234567 + i,
                "node-0123456789abcdef/acme_disk_stream-0_0-0000000000000000/" + String.format("%020d-%020d.segment", base, i));
    }

    /**
     * Without privileges: the real process under {@code ulimit -f 8} (8 KiB files at most) offloads
     * to S3Mock, so its only local writes are the lock, the node id and the manifests; a manifest
     * that would pass 8 KiB cannot be written. The pass fails at that point, and every manifest on
     * disk is a whole one that decodes and names only objects that are there.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aManifestThatCannotGrowStaysWholeUnderAFileSizeLimit() throws Exception {
        S3Server s3mock = S3Servers.s3mock();
        String bucket = s3mock.createBucket("fsize");
        StoreTarget target = StoreTarget.s3(s3mock, bucket, null, null);
        Path dir = Props.work().resolve("diskfull").resolve("fsize");
        CrashCampaign.deleteTree(dir);
        try (TestRoot root = new TestRoot(dir, 1, target, target, Props.seed("fsize"))) {
            // A manifest of about 18 entries first; then about 37 segments more, which pass 8 KiB at about 45
            // entries (segments verified together are recorded in one write, so the limit is met by one save).
            root.append(1000);
            Felix.Result first = root.passInside(); // the setup: no process needed
            assertThat(first.exit()).as(first.describe()).isZero();
            root.append(2000);
            List<String> java = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-XX:-UsePerfData", "-Xshare:auto",
                    "-jar", Felix.jar().toString());
            List<String> command = new ArrayList<>(java);
            command.addAll(root.offloadArgs());
            StringBuilder shell = new StringBuilder("ulimit -f 8 && exec");
            for (String c : command) {
                shell.append(" '").append(c.replace("'", "'\\''")).append('\'');
            }
            ProcessBuilder pb = new ProcessBuilder("bash", "-c", shell.toString()).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.PIPE);
            pb.environment().putAll(target.env());
            pb.environment().remove("FELIX_NODE_ID");
            pb.environment().remove("JAVA_TOOL_OPTIONS");
            Process p = pb.start();
            String output;
            try {
                output = new String(p.getInputStream().readAllBytes());
                assertThat(p.waitFor(3, TimeUnit.MINUTES)).isTrue();
            } finally {
                p.destroyForcibly();
            }
            assertThat(p.exitValue()).as("the pass whose manifest outgrew the limit: %s", output).isNotZero();
            assertThat(output).containsIgnoringCase("too large");
            ShardWriter w = root.shards.get(0);
            Path file = ManifestStore.fileIn(w.dir());
            assertThat(Files.size(file)).as("the manifest on disk").isLessThanOrEqualTo(8 * 1024);
            Manifest kept;
            try {
                kept = ManifestStore.read(w.dir());
            } catch (CorruptionException e) {
                throw new AssertionError("the manifest left by the failed save does not decode", e);
            }
            assertThat(kept.size()).as("entries recorded before the limit").isPositive();
            long keptBytes = Files.size(file);
            root.check("after a pass whose manifest could not grow");
            Felix.Result after = root.passInside(); // the recovery, checked on disk
            assertThat(after.exit()).as(after.describe()).isZero();
            root.check("after a pass without the limit");
            root.sweep("file size limit");
            write(List.of(String.format("disk full (no privileges: ulimit -f 8 KiB on the real process): the pass "
                    + "failed with 'File too large' when the manifest would pass 8 KiB; the manifest on disk stayed "
                    + "whole (%d entries, %d bytes); the next pass recorded all %d", kept.size(), keptBytes,
                    ManifestStore.read(w.dir()).size())));
        }
    }

    private static void write(List<String> lines) {
        Props.summary(String.join(System.lineSeparator(), lines));
    }
}
