package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A build's servers start once, are reused by the next JVM that asks, start again when gone, and
 * stop when the build's Maven process ends; what a build whose keeper was killed left, and what a
 * JVM killed mid-start left, is stopped by the next use. A {@code sleep} process stands in for
 * Maven; the server is a real S3Proxy.
 */
class SharedServersTest {
    @TempDir
    Path registry;

    private final List<Process> started = new java.util.ArrayList<>();
    private final AtomicInteger launches = new AtomicInteger();

    private final SharedServers.Launch s3proxy = (dir, processes) -> {
        launches.incrementAndGet();
        Path jars = Path.of(System.getProperty("felix.s3.servers.dir", "target/s3-servers")).toAbsolutePath();
        return S3Servers.launchS3Proxy(jars, dir, processes::add).server();
    };

    @AfterEach
    void stopStandIns() {
        started.forEach(Process::destroyForcibly);
    }

    @Test
    void aServerStartsOnceIsReusedStartsAgainWhenGoneAndStopsWhenTheBuildEnds() throws Exception {
        Process maven = standIn();
        SharedServers build = new SharedServers(registry, maven.toHandle());
        S3Server first = build.obtain("s3proxy", s3proxy, S3Servers::s3proxyAnswers);
        first.createBucket("first-jvm");

        // another JVM of the same build: a fresh view of the same directory
        S3Server reused = new SharedServers(registry, maven.toHandle()).obtain("s3proxy", s3proxy, S3Servers::s3proxyAnswers);
        assertThat(launches).hasValue(1);
        assertThat(reused.endpoint()).isEqualTo(first.endpoint());
        assertThat(reused.createBucket("second-jvm")).as("the record's keys are the server's").isNotBlank();

        List<ProcessHandle> server = recorded(build, "s3proxy");
        assertThat(server).hasSize(1);
        server.get(0).destroyForcibly();
        server.get(0).onExit().get(10, TimeUnit.SECONDS);
        S3Server again = new SharedServers(registry, maven.toHandle()).obtain("s3proxy", s3proxy, S3Servers::s3proxyAnswers);
        assertThat(launches).as("a registered server that is gone is started again").hasValue(2);
        List<ProcessHandle> second = recorded(build, "s3proxy");
        assertThat(second).hasSize(1).doesNotContainAnyElementsOf(server);
        assertThat(S3Servers.s3proxyAnswers(again.endpoint())).isTrue();

        maven.destroy();
        await("the keeper stops the server once the build's process is gone", () -> second.stream().noneMatch(ProcessHandle::isAlive));
        assertThat(Files.readString(build.build().resolve("servers.log"), StandardCharsets.UTF_8))
                .contains("started S3Proxy", "reused S3Proxy", "registered but not answering");
    }

    @Test
    void whatAnEndedBuildAndAJvmKilledMidStartLeftIsStoppedByTheNextUse() throws Exception {
        Process maven = standIn();
        SharedServers ended = new SharedServers(registry, maven.toHandle());
        ended.obtain("s3proxy", s3proxy, S3Servers::s3proxyAnswers);
        List<ProcessHandle> left = recorded(ended, "s3proxy");
        ProcessHandle keeper = new RecordedProcesses(ended.build().resolve("keeper")).alive().get(0);
        keeper.destroyForcibly();
        keeper.onExit().get(10, TimeUnit.SECONDS);
        maven.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Thread.sleep(1500);
        assertThat(left).as("nothing stops a build's servers once its keeper is killed").allMatch(ProcessHandle::isAlive);

        Process nextMaven = standIn();
        SharedServers next = new SharedServers(registry, nextMaven.toHandle());
        // a JVM of the next build killed while it started the server: one process recorded, no record
        Process halfStarted = standIn();
        new RecordedProcesses(next.build().resolve("s3proxy.pids")).add(halfStarted.toHandle());

        next.obtain("s3proxy", s3proxy, S3Servers::s3proxyAnswers);
        assertThat(left).as("the ended build's server").noneMatch(ProcessHandle::isAlive);
        assertThat(ended.build()).doesNotExist();
        assertThat(halfStarted.waitFor(20, TimeUnit.SECONDS)).as("the half-started server's process").isTrue();
        assertThat(launches).hasValue(2);

        List<ProcessHandle> own = recorded(next, "s3proxy");
        nextMaven.destroy();
        await("the next build's keeper stops its server", () -> own.stream().noneMatch(ProcessHandle::isAlive));
    }

    private Process standIn() throws IOException {
        Process p = new ProcessBuilder("sleep", "600").start();
        started.add(p);
        return p;
    }

    private static List<ProcessHandle> recorded(SharedServers build, String name) throws IOException {
        return new RecordedProcesses(build.build().resolve(name + ".pids")).alive();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(100);
        }
    }
}
