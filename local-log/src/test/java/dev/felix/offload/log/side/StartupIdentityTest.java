package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The start-up rule: when a start writes a new storage id, and that it does so before anything else. */
class StartupIdentityTest {

    @TempDir
    Path root;

    private static final StorageId OLD = new StorageId(1, 2);
    private static final SecureRandom RANDOM = new SecureRandom();

    @Test
    void noStorageIdMeansWritingOne() {
        StartupIdentity.Decision d = StartupIdentity.decide(Optional.empty(), Optional.empty());
        assertThat(d.writesNewStorageId()).isTrue();
        assertThat(d.renewal()).contains(StartupIdentity.Reason.NO_STORAGE_ID);
    }

    @Test
    void aRunThatDiedAcknowledgingBeforeSyncingRenewsTheId() {
        StartupIdentity.Decision d = StartupIdentity.decide(Optional.of(OLD), Optional.of(RunState.running(OLD, true)));
        assertThat(d.renewal()).contains(StartupIdentity.Reason.CRASHED_WHILE_ACKNOWLEDGING_BEFORE_SYNC);
        assertThat(d.existing()).contains(OLD);
    }

    @Test
    void aCleanStopOrASyncingRunOrNoRunStateKeepsTheId() {
        for (Optional<RunState> found : List.of(Optional.<RunState>empty(), Optional.of(RunState.running(OLD, false)),
                Optional.of(RunState.running(OLD, true).stoppedCleanly()),
                Optional.of(RunState.running(OLD, false).stoppedCleanly()))) {
            StartupIdentity.Decision d = StartupIdentity.decide(Optional.of(OLD), found);
            assertThat(d.writesNewStorageId()).as("%s", found).isFalse();
            assertThat(d.existing()).contains(OLD);
        }
    }

    @Test
    void aRegistrationBehindTheControlPlaneRenewsTheId() {
        Optional<RunState> clean = Optional.of(RunState.running(OLD, false).stoppedCleanly());
        assertThat(StartupIdentity.decide(Optional.of(OLD), clean, Optional.of(new Registration(3)), OptionalLong.of(4))
                .renewal()).contains(StartupIdentity.Reason.REGISTRATION_BEHIND);
        assertThat(StartupIdentity.decide(Optional.of(OLD), clean, Optional.of(new Registration(4)), OptionalLong.of(4))
                .writesNewStorageId()).isFalse();
        assertThat(StartupIdentity.decide(Optional.of(OLD), clean, Optional.empty(), OptionalLong.of(4))
                .writesNewStorageId()).isFalse();
        assertThat(StartupIdentity.decide(Optional.of(OLD), clean, Optional.of(new Registration(3)), OptionalLong.empty())
                .writesNewStorageId()).isFalse();
    }

    @Test
    void aDecisionWithoutAnIdMustRenew() {
        assertThatThrownBy(() -> new StartupIdentity.Decision(Optional.empty(), Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFirstStartWritesAnIdThenRunningUnderIt() throws Exception {
        StorageId id = StartupIdentity.begin(root, true, RANDOM);
        assertThat(StorageIdFile.FILE.load(root)).contains(id);
        assertThat(RunStateFile.FILE.load(root)).contains(RunState.running(id, true));
    }

    @Test
    void aStartAfterACrashOfAnAcknowledgingRunWritesANewIdBeforeTheRunState() throws Exception {
        StorageIdFile.FILE.save(root, OLD);
        RunStateFile.FILE.save(root, RunState.running(OLD, true));
        List<String> writes = new ArrayList<>();
        StartupIdentity.Decision d = StartupIdentity.decide(StorageIdFile.FILE.load(root), RunStateFile.FILE.load(root));
        StorageId fresh = StartupIdentity.begin(root, d, false, RANDOM,
                (file, step) -> writes.add(file + " " + step));
        assertThat(fresh).isNotEqualTo(OLD);
        assertThat(writes).containsExactly(
                "storage-id TEMP_WRITTEN", "storage-id TEMP_SYNCED", "storage-id MOVED", "storage-id DIRECTORY_SYNCED",
                "run-state TEMP_WRITTEN", "run-state TEMP_SYNCED", "run-state MOVED", "run-state DIRECTORY_SYNCED");
        assertThat(StorageIdFile.FILE.load(root)).contains(fresh);
        assertThat(RunStateFile.FILE.load(root)).contains(RunState.running(fresh, false));
    }

    @Test
    void aCrashBetweenTheTwoWritesStillRenewsOnTheNextStart() throws Exception {
        StorageIdFile.FILE.save(root, OLD);
        RunStateFile.FILE.save(root, RunState.running(OLD, true));
        StartupIdentity.Decision d = StartupIdentity.decide(StorageIdFile.FILE.load(root), RunStateFile.FILE.load(root));
        assertThatThrownBy(() -> StartupIdentity.begin(root, d, true, RANDOM, (file, step) -> {
            if (file.equals(RunStateFile.FILE_NAME)) {
                throw new IOException("crash before run-state");
            }
        })).hasMessage("crash before run-state");
        StorageId written = StorageIdFile.FILE.load(root).orElseThrow();
        assertThat(written).isNotEqualTo(OLD);
        // run-state still says the acknowledging run died: the next start renews again, never keeps OLD.
        StorageId next = StartupIdentity.begin(root, true, RANDOM);
        assertThat(next).isNotEqualTo(OLD).isNotEqualTo(written);
    }

    @Test
    void aCleanStopKeepsTheIdAcrossStarts() throws Exception {
        StorageId id = StartupIdentity.begin(root, true, RANDOM);
        StartupIdentity.end(root, id, true);
        assertThat(RunStateFile.FILE.load(root)).contains(new RunState(RunState.State.STOPPED_CLEANLY, true, id));
        assertThat(StartupIdentity.begin(root, true, RANDOM)).isEqualTo(id);
        // Not stopped: the acknowledging run "crashed", so the next start renews.
        assertThat(StartupIdentity.begin(root, false, RANDOM)).isNotEqualTo(id);
    }

    @Test
    void aDamagedIdentityFileFailsTheStartAndWritesNothing() throws Exception {
        StorageIdFile.FILE.save(root, OLD);
        Files.write(RunStateFile.FILE.fileIn(root), new byte[] {1, 2, 3});
        assertThatThrownBy(() -> StartupIdentity.begin(root, true, RANDOM)).isInstanceOf(CorruptionException.class);
        assertThat(StorageIdFile.FILE.load(root)).contains(OLD);
        assertThat(Files.readAllBytes(RunStateFile.FILE.fileIn(root))).containsExactly(1, 2, 3);
        assertThat(DurableFiles.tempFor(StorageIdFile.FILE.fileIn(root))).doesNotExist();
    }
}
