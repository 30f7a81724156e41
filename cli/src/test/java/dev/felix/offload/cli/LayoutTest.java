package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The modules' one-way dependencies (README "Layout"), held against the sources and poms. */
class LayoutTest {

    private static final Path REPO = Path.of(System.getProperty("felix.repo.dir", "..")).toAbsolutePath().normalize();

    @Test
    void noModuleUsesOneItMayNot() {
        assertThat(ModuleLayout.violations(REPO)).isEmpty();
    }

    @Test
    void theScanSeesEveryModulesPackages() {
        Map<String, String> owners = ModuleLayout.packageOwners(REPO);
        assertThat(owners.values()).containsAll(ModuleLayout.MAY_USE.keySet());
        assertThat(owners).containsEntry("dev.felix.offload.log", "local-log")
                .containsEntry("dev.felix.offload.store", "object-store")
                .containsEntry("dev.felix.offload.schedule", "daemon")
                .containsEntry("dev.felix.offload.scrub", "daemon")
                .containsEntry("dev.felix.offload.cli", "cli")
                .containsEntry("dev.felix.offload.store.harness", "object-store tests");
    }

    @Test
    void aForbiddenImportIsFound(@TempDir Path repo) throws IOException {
        write(repo, "local-log/src/main/java/dev/felix/offload/log/Segment.java",
                "package dev.felix.offload.log;\npublic class Segment {}\n");
        write(repo, "object-store/src/main/java/dev/felix/offload/store/Store.java",
                "package dev.felix.offload.store;\n\nimport dev.felix.offload.log.Segment;\n"
                        + "// dev.felix.offload.log.Segment in a comment is no use\npublic class Store {}\n");
        write(repo, "offload/src/main/java/dev/felix/offload/pass/Pass.java",
                "package dev.felix.offload.pass;\nimport dev.felix.offload.log.Segment;\nimport dev.felix.offload.store.Store;\n"
                        + "class Pass { dev.felix.offload.daemon.Daemon d; }\n");
        write(repo, "daemon/src/main/java/dev/felix/offload/daemon/Daemon.java",
                "package dev.felix.offload.daemon;\npublic class Daemon {}\n");
        write(repo, "reliability/src/test/java/dev/felix/offload/reliability/Campaign.java",
                "package dev.felix.offload.reliability;\npublic class Campaign {}\n");
        write(repo, "retention/src/main/java/dev/felix/offload/retention/Sweep.java",
                "package dev.felix.offload.retention;\nimport dev.felix.offload.reliability.Campaign;\nclass Sweep {}\n");
        write(repo, "manifest/pom.xml", "<project><dependencies><dependency><groupId>dev.felix.offload</groupId>"
                + "<artifactId>offload</artifactId></dependency><dependency><groupId>dev.felix.offload</groupId>"
                + "<artifactId>object-store</artifactId><type>test-jar</type><scope>test</scope></dependency>"
                + "</dependencies></project>");

        assertThat(ModuleLayout.violations(repo)).containsExactlyInAnyOrder(
                "manifest/pom.xml: depends on module offload",
                "object-store/src/main/java/dev/felix/offload/store/Store.java: uses dev.felix.offload.log of module local-log",
                "offload/src/main/java/dev/felix/offload/pass/Pass.java: uses dev.felix.offload.daemon of module daemon",
                "retention/src/main/java/dev/felix/offload/retention/Sweep.java: uses dev.felix.offload.reliability"
                        + " of module reliability tests");
    }

    @Test
    void aPackageUsingOneItMayNotIsFound(@TempDir Path repo) throws IOException {
        write(repo, "offload/src/main/java/dev/felix/offload/pass/StopSignal.java",
                "package dev.felix.offload.pass;\npublic interface StopSignal {}\n");
        write(repo, "offload/src/main/java/dev/felix/offload/copy/Release.java",
                "package dev.felix.offload.copy;\nclass Release {}\n");
        write(repo, "retention/src/main/java/dev/felix/offload/retention/Sweep.java",
                "package dev.felix.offload.retention;\nimport dev.felix.offload.pass.StopSignal;\nclass Sweep {}\n");
        write(repo, "daemon/src/main/java/dev/felix/offload/daemon/Daemon.java",
                "package dev.felix.offload.daemon;\nimport dev.felix.offload.pass.StopSignal;\nclass Daemon {}\n");

        assertThat(ModuleLayout.violations(repo)).containsExactly(
                "retention/src/main/java/dev/felix/offload/retention/Sweep.java: uses dev.felix.offload.pass,"
                        + " which package dev.felix.offload.retention may not");
    }

    private static void write(Path repo, String file, String text) throws IOException {
        Path p = repo.resolve(file);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }
}
