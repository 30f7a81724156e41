package dev.felix.offload.it;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution as an operator installs it: dist/target/felix-offload-VERSION.tar.gz unpacked
 * with tar, its bin/felix-offload run directly and through a link, with the environment it takes.
 */
@Order(1) // the longest classes start first (see the pom): 198 s in CI
class LauncherIT {

    @TempDir
    Path work;

    private Path home;

    record Run(int exit, String out, String err) {
    }

    @BeforeEach
    void install() throws Exception {
        Path target = Path.of("..", "dist", "target").toAbsolutePath().normalize();
        Path tarball;
        try (Stream<Path> files = Files.list(target)) {
            tarball = files.filter(f -> f.getFileName().toString().matches("felix-offload-.+\\.tar\\.gz")).findFirst()
                    .orElseThrow(() -> new AssertionError("no felix-offload-*.tar.gz in " + target + "; mvn package builds it"));
        }
        Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", work.toString()).inheritIO().start();
        assertThat(tar.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(tar.exitValue()).isZero();
        try (Stream<Path> dirs = Files.list(work)) {
            home = dirs.filter(d -> d.getFileName().toString().startsWith("felix-offload-")).findFirst().orElseThrow();
        }
    }

    private Run run(Path launcher, Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).directory(work.toFile())
                .redirectOutput(work.resolve("out").toFile()).redirectError(work.resolve("err").toFile());
        Map<String, String> e = b.environment();
        e.keySet().removeIf(k -> k.startsWith("FELIX_") || k.equals("JAVA_OPTS") || k.equals("CACHE_DIRECTORY"));
        e.put("JAVA_HOME", System.getProperty("java.home"));
        e.putAll(env);
        e.values().removeIf(v -> v == null || v.isEmpty());
        Process p = b.start();
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).isTrue();
        return new Run(p.exitValue(), Files.readString(work.resolve("out"), StandardCharsets.UTF_8),
                Files.readString(work.resolve("err"), StandardCharsets.UTF_8));
    }

    @Test
    void theLauncherFindsJavaTakesTheHeapAndOptionsAndStartsFromItsClassDataArchive() throws Exception {
        Path launcher = home.resolve("bin/felix-offload");
        assertThat(Files.isExecutable(launcher)).isTrue();
        assertThat(home.resolve("lib/felix-offload.classlist")).isRegularFile();

        // First start: the archive is made (here beside the jar, the installation being writable).
        Run first = run(launcher, Map.of(), "--version");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out()).startsWith("felix-offload ");
        assertThat(first.err()).isEmpty();
        List<Path> archives = archives(home.resolve("lib/cds"));
        assertThat(archives).hasSize(1);

        // Later starts map the tool's classes from it; the heap and JAVA_OPTS reach the JVM.
        Run shared = run(launcher, Map.of("FELIX_OFFLOAD_HEAP", "96m",
                "JAVA_OPTS", "-Xshare:on -Xlog:class+load=info:stdout -XX:+PrintCommandLineFlags"), "--version");
        assertThat(shared.exit()).as(shared.err()).isZero();
        assertThat(shared.out()).contains("dev.felix.offload.cli.FelixOffload source: shared objects file")
                .contains("-XX:MaxHeapSize=" + (96L << 20)).contains("felix-offload ");
        assertThat(archives(home.resolve("lib/cds"))).isEqualTo(archives);

        // A command that ends soon compiles with the first tier only; the daemon (`run`) with every tier,
        // and FELIX_OFFLOAD_JIT chooses either way.
        String flags = "-XX:+PrintCommandLineFlags";
        assertThat(shared.out()).contains("-XX:TieredStopAtLevel=1");
        Run daemonHelp = run(launcher, Map.of("JAVA_OPTS", flags), "run", "--help");
        assertThat(daemonHelp.exit()).as(daemonHelp.err()).isZero();
        assertThat(daemonHelp.out()).contains("-XX:MaxHeapSize=").doesNotContain("TieredStopAtLevel");
        Run full = run(launcher, Map.of("JAVA_OPTS", flags, "FELIX_OFFLOAD_JIT", "full"), "--version");
        assertThat(full.out()).contains("-XX:MaxHeapSize=").doesNotContain("TieredStopAtLevel");
        Run quickDaemon = run(launcher, Map.of("JAVA_OPTS", flags, "FELIX_OFFLOAD_JIT", "quick"), "run", "--help");
        assertThat(quickDaemon.out()).contains("-XX:TieredStopAtLevel=1");

        // The same split for the collector: the serial one for a command that ends soon, the JVM's choice
        // for the daemon; FELIX_OFFLOAD_GC chooses either way, and a collector named in the JVM's options wins,
        // since the JVM refuses to start with two.
        assertThat(shared.out()).contains("-XX:+UseSerialGC");
        assertThat(daemonHelp.out()).doesNotContain("-XX:+UseSerialGC");
        Run jvmGc = run(launcher, Map.of("JAVA_OPTS", flags, "FELIX_OFFLOAD_GC", "jvm"), "--version");
        assertThat(jvmGc.exit()).as(jvmGc.err()).isZero();
        assertThat(jvmGc.out()).contains("-XX:MaxHeapSize=").doesNotContain("-XX:+UseSerialGC");
        Run serialDaemon = run(launcher, Map.of("JAVA_OPTS", flags, "FELIX_OFFLOAD_GC", "serial"), "run", "--help");
        assertThat(serialDaemon.out()).contains("-XX:+UseSerialGC");
        Run parallel = run(launcher, Map.of("JAVA_OPTS", flags + " -XX:+UseParallelGC"), "--version");
        assertThat(parallel.exit()).as(parallel.err()).isZero();
        assertThat(parallel.out()).contains("-XX:+UseParallelGC").doesNotContain("-XX:+UseSerialGC");
        Run toolOptions = run(launcher, Map.of("JAVA_OPTS", flags, "JAVA_TOOL_OPTIONS", "-XX:+UseParallelGC"), "--version");
        assertThat(toolOptions.exit()).as(toolOptions.err()).isZero();
        assertThat(toolOptions.out()).contains("-XX:+UseParallelGC").doesNotContain("-XX:+UseSerialGC");

        // An S3 store's client comes from the archive too (the build's second class list): here a pass
        // whose first request is refused, which builds the client, signs and sends.
        assertThat(home.resolve("lib/felix-offload-s3.classlist")).isRegularFile();
        Path emptyRoot = Files.createDirectories(work.resolve("s3-root"));
        Run s3 = run(launcher, Map.of("JAVA_OPTS", "-Xlog:class+load=info:stdout", "AWS_ACCESS_KEY_ID", "launcher-test",
                "AWS_SECRET_ACCESS_KEY", "launcher-test", "FELIX_NODE_ID", "launcher-test"), "offload", "--data-dir",
                emptyRoot.toString(), "--store", "s3://launcher-test?endpoint=http://127.0.0.1:9&region=us-east-1"
                        + "&path-style=true&max-attempts=1&connect-timeout=2&read-timeout=2");
        assertThat(s3.exit()).as(s3.err()).isNotZero();
        assertThat(s3.out()).contains("software.amazon.awssdk.services.s3.DefaultS3Client source: shared objects file")
                .contains("org.apache.http.impl.client.InternalHttpClient source: shared objects file");

        // Through a link (as /usr/local/bin/felix-offload would be), with the archive elsewhere.
        Path link = Files.createSymbolicLink(work.resolve("felix-offload-link"), launcher);
        Path cache = work.resolve("cache");
        Run linked = run(link, Map.of("FELIX_OFFLOAD_CDS_DIR", cache.toString()), "--version");
        assertThat(linked.exit()).as(linked.err()).isZero();
        assertThat(archives(cache)).hasSize(1);
        // A jar replaced (here: its time changed) makes a new archive, and the old one goes.
        List<Path> before = archives(cache);
        assertThat(home.resolve("lib/felix-offload.jar").toFile().setLastModified(System.currentTimeMillis() - 60_000)).isTrue();
        assertThat(run(link, Map.of("FELIX_OFFLOAD_CDS_DIR", cache.toString()), "--version").exit()).isZero();
        assertThat(archives(cache)).hasSize(1).doesNotContainAnyElementsOf(before);
        Run off = run(link, Map.of("FELIX_OFFLOAD_CDS", "off", "FELIX_OFFLOAD_CDS_DIR", work.resolve("none").toString(),
                "JAVA_OPTS", "-Xlog:class+load=info:stdout"), "--version");
        assertThat(off.exit()).isZero();
        assertThat(off.out()).contains("dev.felix.offload.cli.FelixOffload source: ").doesNotContain(
                "dev.felix.offload.cli.FelixOffload source: shared objects file");
        assertThat(work.resolve("none")).doesNotExist();

        // The tool's own exit codes come through.
        Run usage = run(launcher, Map.of(), "offload", "--data-dir", work.resolve("absent").toString(), "--store", "file:///tmp/x");
        assertThat(usage.exit()).isEqualTo(2);
    }

    @Test
    void whatTheLauncherCannotUseIsOneLineAndExit2() throws Exception {
        Path launcher = home.resolve("bin/felix-offload");
        Run heap = run(launcher, Map.of("FELIX_OFFLOAD_HEAP", "lots"), "--version");
        assertThat(heap.exit()).isEqualTo(2);
        assertThat(heap.err().strip()).isEqualTo("felix-offload: FELIX_OFFLOAD_HEAP is 'lots'; expected a size such as 512m or 2g");
        Run jit = run(launcher, Map.of("FELIX_OFFLOAD_JIT", "fast"), "--version");
        assertThat(jit.exit()).isEqualTo(2);
        assertThat(jit.err().strip()).isEqualTo("felix-offload: FELIX_OFFLOAD_JIT is 'fast'; expected auto, quick or full");
        Run gc = run(launcher, Map.of("FELIX_OFFLOAD_GC", "g1"), "--version");
        assertThat(gc.exit()).isEqualTo(2);
        assertThat(gc.err().strip()).isEqualTo("felix-offload: FELIX_OFFLOAD_GC is 'g1'; expected auto, serial or jvm");
        Run javaHome = run(launcher, Map.of("JAVA_HOME", work.resolve("no-jdk").toString()), "--version");
        assertThat(javaHome.exit()).isEqualTo(2);
        assertThat(javaHome.err()).contains("JAVA_HOME is " + work.resolve("no-jdk") + ", which has no bin/java");
        Map<String, String> noJava = new HashMap<>();
        noJava.put("JAVA_HOME", "");
        noJava.put("PATH", "/nonexistent");
        Run none = runWithShell(launcher, noJava);
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("no Java found");
        // An old Java, as its release file says.
        Path old = work.resolve("jdk11");
        Files.createDirectories(old.resolve("bin"));
        Files.writeString(old.resolve("release"), "JAVA_VERSION=\"11.0.2\"\n");
        Path fake = Files.writeString(old.resolve("bin/java"), "#!/bin/sh\nexit 0\n");
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        Run tooOld = run(launcher, Map.of("JAVA_HOME", old.toString()), "--version");
        assertThat(tooOld.exit()).isEqualTo(2);
        assertThat(tooOld.err()).contains("is Java 11.0.2; felix-offload needs Java 17 or newer");
    }

    /** The launcher under /bin/sh with exactly {@code env}, so no java is on the PATH. */
    private Run runWithShell(Path launcher, Map<String, String> env) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/env", "-i"));
        env.forEach((k, v) -> {
            if (!v.isEmpty()) {
                command.add(k + "=" + v);
            }
        });
        command.addAll(List.of("/bin/sh", launcher.toString(), "--version"));
        Process p = new ProcessBuilder(command).redirectOutput(work.resolve("out").toFile())
                .redirectError(work.resolve("err").toFile()).start();
        assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
        return new Run(p.exitValue(), Files.readString(work.resolve("out")), Files.readString(work.resolve("err")));
    }

    private static List<Path> archives(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".jsa")).sorted().toList();
        }
    }
}
