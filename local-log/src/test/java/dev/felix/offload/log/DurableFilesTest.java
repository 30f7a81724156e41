package dev.felix.offload.log;

import dev.felix.offload.log.DurableFiles.Step;
import dev.felix.offload.log.DurableFiles.Sync;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The durable replace: its steps in order, and what the directory holds when it stops after each. */
class DurableFilesTest {

    private static final byte[] OLD = "old contents".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEW = "the new contents, longer than the old".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    /** Stands for the process dying right after a step. */
    private static final class SimulatedCrash extends IOException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(Step step) {
            super("simulated crash after " + step);
        }
    }

    @Test
    void fullSyncReportsTheFourStepsInOrder() throws IOException {
        List<Step> seen = new ArrayList<>();
        DurableFiles.replace(dir.resolve("f"), NEW, Sync.FULL, seen::add);
        assertThat(seen).containsExactly(Step.TEMP_WRITTEN, Step.TEMP_SYNCED, Step.MOVED, Step.DIRECTORY_SYNCED);
    }

    @Test
    void noSyncReportsOnlyTheStepsItTakes() throws IOException {
        List<Step> seen = new ArrayList<>();
        DurableFiles.replace(dir.resolve("f"), NEW, Sync.NONE, seen::add);
        assertThat(seen).containsExactly(Step.TEMP_WRITTEN, Step.MOVED);
    }

    @Test
    void replaceCreatesThenReplacesAndLeavesNoTemporary() throws IOException {
        Path target = dir.resolve("f");
        DurableFiles.replace(target, OLD, Sync.FULL);
        assertThat(Files.readAllBytes(target)).isEqualTo(OLD);
        DurableFiles.replace(target, NEW, Sync.FULL);
        assertThat(Files.readAllBytes(target)).isEqualTo(NEW);
        assertThat(DurableFiles.tempFor(target)).doesNotExist();
        assertThat(DurableFiles.tempFor(target)).isEqualTo(dir.resolve("f" + DurableFiles.TEMP_SUFFIX).toAbsolutePath());
    }

    @ParameterizedTest
    @EnumSource(Step.class)
    void stoppedAfterAStepTheTargetIsWholeOldOrWholeNew(Step crashAfter) throws IOException {
        Path target = dir.resolve("f");
        DurableFiles.replace(target, OLD, Sync.FULL);

        assertThatThrownBy(() -> DurableFiles.replace(target, NEW, Sync.FULL, step -> {
            if (step == crashAfter) {
                throw new SimulatedCrash(step);
            }
        })).isInstanceOf(SimulatedCrash.class);

        boolean moved = crashAfter.compareTo(Step.MOVED) >= 0;
        assertThat(Files.readAllBytes(target)).isEqualTo(moved ? NEW : OLD);
        Path temp = DurableFiles.tempFor(target);
        if (moved) {
            assertThat(temp).doesNotExist();
        } else {
            // What a crash leaves: the temporary, holding the new bytes; the target untouched.
            assertThat(Files.readAllBytes(temp)).isEqualTo(NEW);
        }
    }

    @Test
    void aLeftoverTemporaryIsOverwrittenByTheNextReplace() throws IOException {
        Path target = dir.resolve("f");
        DurableFiles.replace(target, OLD, Sync.FULL);
        byte[] longGarbage = new byte[4096];
        java.util.Arrays.fill(longGarbage, (byte) 0x5A);
        Files.write(DurableFiles.tempFor(target), longGarbage);

        DurableFiles.replace(target, NEW, Sync.FULL);

        // Truncated, not overlaid: a shorter new file carries none of the leftover's bytes.
        assertThat(Files.readAllBytes(target)).isEqualTo(NEW);
        assertThat(DurableFiles.tempFor(target)).doesNotExist();
    }

    @Test
    void aFullDeviceIsReportedNamingTheFileAndTheCauseAndLeavesTheTargetAsItWas() throws IOException {
        Path full = Path.of("/dev/full");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(full),
                "no /dev/full here (Linux's always-full device), so a write cannot be made to fail with ENOSPC");
        Path target = dir.resolve("f");
        DurableFiles.replace(target, OLD, Sync.FULL);
        // The temporary opened by the replace is the kernel's always-full device: the write fails with a
        // real ENOSPC, as on a full filesystem, without needing one.
        Files.createSymbolicLink(DurableFiles.tempFor(target), full);

        assertThatThrownBy(() -> DurableFiles.replace(target, NEW, Sync.FULL))
                .isInstanceOf(java.nio.file.FileSystemException.class)
                .satisfies(e -> {
                    java.nio.file.FileSystemException f = (java.nio.file.FileSystemException) e;
                    assertThat(f.getFile()).isEqualTo(DurableFiles.tempFor(target).toString());
                    assertThat(f.getReason()).containsIgnoringCase("no space left on device");
                    assertThat(IoProblem.describe(f)).isEqualTo(DurableFiles.tempFor(target) + ": " + f.getReason());
                });
        assertThat(Files.readAllBytes(target)).isEqualTo(OLD);
    }

    @Test
    void namingKeepsAnExceptionThatAlreadyNamesAFile() {
        IOException named = new java.nio.file.AccessDeniedException("/x/offload.manifest");
        assertThat(DurableFiles.naming(dir.resolve("y"), named)).isSameAs(named);
        IOException bare = new IOException("Input/output error");
        IOException wrapped = DurableFiles.naming(dir.resolve("y"), bare);
        assertThat(IoProblem.describe(wrapped)).isEqualTo(dir.resolve("y") + ": Input/output error");
        assertThat(wrapped.getCause()).isSameAs(bare);
    }
}
