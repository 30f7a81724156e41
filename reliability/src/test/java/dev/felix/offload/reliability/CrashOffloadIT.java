package dev.felix.offload.reliability;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Slice 1: the real {@code felix-offload offload} process killed at every named step and at random
 * moments, against the filesystem store and against S3Mock; see {@link CrashCampaign} for what is
 * checked after each kill. Kill counts: {@code felix.reliability.fsKills} (default 136) and
 * {@code felix.reliability.s3Kills} (default 40; a cycle on S3Mock costs about 2.5 times as much),
 * and 24 of the daemon below, so 200 per CI run; {@code felix.reliability.killsPerRoot} (default 25);
 * {@code felix.reliability.realRestartEvery} (default 3: every third completion pass in a new
 * process, the others in the test JVM); and a time bound per store,
 * {@code felix.reliability.crashMinutes} (default 20), after which a campaign stops and says so.
 *
 * <p>The daemon ({@code felix-offload run --config}, every pass scheduled each second) goes through
 * the same campaign, on both stores: {@code felix.reliability.daemonKills} (default 24, half on
 * each store), halted at every step its offload pass reaches (all but UNLINKED: its offload pass
 * never unlinks, its retention pass does) and SIGKILLed at random within 3.5 s of saying it serves,
 * so kills land in offload, retention and orphan-sweep passes alike.
 */
@Order(1) // the suite's longest class: started first of the classes that run two at a time (see the pom)
class CrashOffloadIT {

    private static final int FS_KILLS = Props.integer("felix.reliability.fsKills", 136);
    private static final int S3_KILLS = Props.integer("felix.reliability.s3Kills", 40);
    private static final int DAEMON_KILLS = Props.integer("felix.reliability.daemonKills", 24);
    private static final int KILLS_PER_ROOT = Props.integer("felix.reliability.killsPerRoot", 25);
    private static final int REAL_RESTART_EVERY = Props.integer("felix.reliability.realRestartEvery", 3);
    private static final Duration BUDGET = Duration.ofMinutes(Props.integer("felix.reliability.crashMinutes", 20));

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    @Timeout(value = 60, unit = TimeUnit.MINUTES)
    void theFilesystemStoreOffloaderSurvivesKillsAtEveryStepAndAtRandom() throws Exception {
        campaign("fs", FS_KILLS, dir -> StoreTarget.filesystem(dir));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.MINUTES)
    void theS3OffloaderSurvivesKillsAtEveryStepAndAtRandom() throws Exception {
        campaign("s3mock", S3_KILLS, dir -> StoreTarget.s3mock("crash"));
    }

    private static void campaign(String name, int kills, java.util.function.Function<Path, StoreTarget> targets)
            throws Exception {
        campaign(name, kills, targets, false);
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    @Timeout(value = 60, unit = TimeUnit.MINUTES)
    void theDaemonSurvivesKillsAtEveryStepAndAtRandomOnBothStores() throws Exception {
        campaign("daemon-fs", DAEMON_KILLS / 2, dir -> StoreTarget.filesystem(dir), true);
        campaign("daemon-s3mock", DAEMON_KILLS - DAEMON_KILLS / 2, dir -> StoreTarget.s3mock("crash-daemon"), true);
    }

    private static void campaign(String name, int kills, java.util.function.Function<Path, StoreTarget> targets,
                                 boolean daemon) throws Exception {
        Path work = Files.createDirectories(Props.work().resolve("crash"));
        CrashCampaign.Stats stats = new CrashCampaign(name, work, targets, kills, KILLS_PER_ROOT, REAL_RESTART_EVERY,
                BUDGET, Props.seed("crash-" + name), daemon).run();
        Props.summary("crash campaign " + name + ": " + stats);
        assertThat(stats.kills()).as("kills delivered (%s)", stats).isGreaterThan(0);
        if (!stats.deadlineHit) {
            assertThat(stats.kills()).as("every planned kill delivered (%s)", stats).isGreaterThanOrEqualTo(kills);
            assertThat(stats.halts.keySet()).as("a halt at every step (%s)", stats).containsAll(java.util.Arrays
                    .stream(dev.felix.offload.pass.OffloadStep.values())
                    .filter(s -> !daemon || s != dev.felix.offload.pass.OffloadStep.UNLINKED).toList());
        }
    }
}
