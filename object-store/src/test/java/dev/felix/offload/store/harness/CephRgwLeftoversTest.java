package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test JVM killed outright cannot stop the cluster it started; the next start in the same
 * directory must stop what it left, and a JVM that exits normally stops its own daemons.
 */
@ExtendWith(RgwAvailable.class)
class CephRgwLeftoversTest {

    @Test
    void aKilledRunsDaemonsAreStoppedByTheNextStartAndANormalExitStopsItsOwn() throws Exception {
        Path dir = Path.of("target", "rgw-leftovers").toAbsolutePath();
        Process first = startJvm(dir);
        List<Long> left;
        try {
            awaitReady(first);
            left = CephRgw.recordedPids(dir);
            assertThat(left).hasSize(3);
            first.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            Thread.sleep(500);
            assertThat(left).as("daemons outlive a JVM killed with SIGKILL").allMatch(CephRgwLeftoversTest::alive);
        } finally {
            first.destroyForcibly();
        }

        Process second = startJvm(dir);
        List<Long> own;
        try {
            awaitReady(second);
            assertThat(left).as("the next start stopped them").noneMatch(CephRgwLeftoversTest::alive);
            own = CephRgw.recordedPids(dir);
            assertThat(own).hasSize(3).doesNotContainAnyElementsOf(left).allMatch(CephRgwLeftoversTest::alive);
        } finally {
            second.destroy(); // SIGTERM: the shutdown hook runs
        }
        assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(own).as("a normal exit stops its own daemons").noneMatch(CephRgwLeftoversTest::alive);
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static Process startJvm(Path dir) throws IOException {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-Dfelix.rgw.dir=" + dir, "-cp", System.getProperty("java.class.path"),
                CephRgw.class.getName())
                .redirectErrorStream(true)
                .start();
    }

    private static void awaitReady(Process p) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("ready ")) {
                // keep draining so the child never blocks on a full pipe
                Thread drain = new Thread(() -> {
                    try {
                        while (out.readLine() != null) {
                            // discarded
                        }
                    } catch (IOException e) {
                        // the child is gone
                    }
                });
                drain.setDaemon(true);
                drain.start();
                return;
            }
            seen.append(line).append('\n');
        }
        throw new IOException("the cluster JVM ended before it was ready:\n" + seen);
    }
}
