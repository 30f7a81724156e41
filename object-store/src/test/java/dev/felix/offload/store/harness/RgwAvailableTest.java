package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.io.TempDir;

/** Where Ceph is missing the RGW classes are skipped with how to install it, except in CI, where that fails. */
class RgwAvailableTest {
    @TempDir
    Path tmp;

    @Test
    void aPathWithoutTheCommandsNamesThemAndTheInstallCommand() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        Optional<String> missing = CephRgw.missingPackages(empty.toString());
        assertThat(missing).hasValueSatisfying(m -> assertThat(m).contains("radosgw", "ceph-mon", "ceph-osd")
                .contains("apt-get install --no-install-recommends " + CephRgw.PACKAGES));
        assertThat(CephRgw.missingPackages(null)).isPresent();

        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String command : CephRgw.COMMANDS) {
            Files.createFile(bin.resolve(command), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        }
        assertThat(CephRgw.missingPackages(empty + java.io.File.pathSeparator + bin)).isEmpty();
        Files.delete(bin.resolve("radosgw"));
        assertThat(CephRgw.missingPackages(bin.toString())).hasValueSatisfying(m -> assertThat(m).contains("(radosgw not on the PATH)"));
    }

    @Test
    void missingIsASkipWithTheHintOutsideCiAndAFailureInCi() {
        Optional<String> missing = Optional.of("Ceph RGW is not installed (radosgw not on the PATH); install it with ...");
        ConditionEvaluationResult skip = RgwAvailable.evaluate(missing, false, "OffloadOnRgwTest");
        assertThat(skip.isDisabled()).isTrue();
        assertThat(skip.getReason()).hasValueSatisfying(r -> assertThat(r).startsWith("OffloadOnRgwTest skipped: Ceph RGW is not installed"));
        assertThatThrownBy(() -> RgwAvailable.evaluate(missing, true, "OffloadOnRgwTest"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("CI=true").hasMessageContaining("OffloadOnRgwTest");
        assertThat(RgwAvailable.evaluate(Optional.empty(), true, "OffloadOnRgwTest").isDisabled()).isFalse();
    }
}
