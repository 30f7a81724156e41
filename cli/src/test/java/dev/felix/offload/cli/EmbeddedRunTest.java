package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A command run inside this JVM: its output, its log lines and its environment are its own. */
class EmbeddedRunTest {

    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {
    }

    private static Run run(Map<String, String> env, String... args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = EmbeddedRun.run(out, err, env, TIMEOUT, args);
        return new Run(exit, out.toString(Charset.defaultCharset()), err.toString(Charset.defaultCharset()));
    }

    /** A generated data root with a retention configuration whose override reaches no shard (a warning per pass). */
    private Path idleOverride(String name) throws Exception {
        Path root = tmp.resolve(name);
        Run gen = run(Map.of(), "generate", "--data-dir", root.toString(), "--records", "300", "--payload-bytes", "100",
                "--segment-bytes", "16384");
        assertThat(gen.exit()).as(gen.err()).isZero();
        assertThat(gen.out()).contains("wrote 300 records");
        String store = Files.createDirectories(tmp.resolve(name + "-store")).toUri().toString();
        return Files.writeString(tmp.resolve(name + ".yaml"), "data-dir: " + root + "\nstore: " + store
                + "\nnode-id: " + name + "\nretention.streams:\n  \"acme/default/" + name + "\":\n    retention.ms: -1\n");
    }

    @Test
    void aRunsLogLinesGoToItsOwnStandardErrorInTheToolsFormat() throws Exception {
        Path config = idleOverride("solo");
        Run r = run(Map.of(), "retention", "--config", config.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("retention as node solo");
        assertThat(r.err().lines().filter(l -> l.contains("acme/default/solo matches no shard")).toList())
                .isNotEmpty()
                .allSatisfy(line -> assertThat(line)
                        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) WARN  .*"));
    }

    @Test
    void runsAtTheSameTimeKeepTheirLogLinesApart() throws Exception {
        List<Path> configs = List.of(idleOverride("first"), idleOverride("second"), idleOverride("third"));
        ExecutorService pool = Executors.newFixedThreadPool(configs.size());
        try {
            for (int round = 0; round < 3; round++) {
                List<Future<Run>> runs = new ArrayList<>();
                for (Path c : configs) {
                    runs.add(pool.submit(() -> run(Map.of(), "retention", "--config", c.toString())));
                }
                for (int i = 0; i < configs.size(); i++) {
                    Run r = runs.get(i).get();
                    String own = configs.get(i).getFileName().toString().replace(".yaml", "");
                    assertThat(r.exit()).as(r.err()).isZero();
                    assertThat(r.err()).contains("acme/default/" + own + " matches no shard");
                    for (Path other : configs) {
                        String name = other.getFileName().toString().replace(".yaml", "");
                        if (!name.equals(own)) {
                            assertThat(r.err()).as("run " + own).doesNotContain("acme/default/" + name + " ");
                        }
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theNodeIdComesFromTheEnvironmentGivenNotThisJvms() throws Exception {
        Path config = idleOverride("envtest");
        Path noNodeId = Files.writeString(tmp.resolve("no-node-id.yaml"),
                Files.readString(config).replace("node-id: envtest\n", ""));
        Run r = run(Map.of("FELIX_NODE_ID", "a/b"), "retention", "--config", noNodeId.toString());
        assertThat(r.exit()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(r.err()).contains("node id from environment variable FELIX_NODE_ID").doesNotContain("\tat ");
        Run named = run(Map.of("FELIX_NODE_ID", "from-env"), "retention", "--config", noNodeId.toString());
        assertThat(named.exit()).as(named.err()).isZero();
        assertThat(named.out()).contains("retention as node from-env");
    }

    @Test
    void aDaemonRefusingItsConfigurationEndsHereAndOneThatWouldStartNeedsAProcess() throws Exception {
        Path bad = Files.writeString(tmp.resolve("bad.yaml"), "data-dir: " + tmp + "\nstore: file:///x\n"
                + "offload.parallelism: two\n");
        Run refused = run(Map.of(), "run", "--config", bad.toString());
        assertThat(refused.exit()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(refused.err()).contains("offload.parallelism: expected an integer from 1 to 1024, got 'two'");

        Path good = idleOverride("daemon");
        assertThatThrownBy(() -> run(Map.of(), "run", "--config", good.toString()))
                .isInstanceOf(EmbeddedRun.NeedsProcess.class);
        assertThat(Files.exists(tmp.resolve("daemon").resolve("daemon.lock"))).as("the daemon's lock").isFalse();
    }

    @Test
    void binaryOutputGoesToTheRunsStandardOutput() throws Exception {
        Path root = tmp.resolve("raw");
        assertThat(run(Map.of(), "generate", "--data-dir", root.toString(), "--records", "10", "--payload-bytes", "8")
                .exit()).isZero();
        String shard = new dev.felix.offload.log.DataRoot(root).streamShards().get(0).name();
        String store = Files.createDirectories(tmp.resolve("raw-store")).toUri().toString();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = EmbeddedRun.run(out, err, Map.of(), TIMEOUT, "read", "--data-dir", root.toString(), "--store", store,
                "--shard", shard, "--from", "0", "--max-records", "3", "--format", "raw");
        assertThat(exit).as(err.toString(Charset.defaultCharset())).isZero();
        assertThat(out.size()).as("three records' bytes").isGreaterThan(3 * 8);
    }
}
