package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run builds the model of the one command it names (see {@link FelixOffload#commandLine(FelixOffload, String...)}),
 * and everything a user sees without naming one (usage, version, help, a misspelt name) still comes from
 * the whole tree.
 */
class CommandTreeTest {

    private static final Set<String> ALL = FelixOffload.commandLine().getSubcommands().keySet();

    @Test
    void aRunNamingACommandBuildsThatCommandAlone() {
        assertThat(ALL).contains("offload", "run", "read", "restore", "manifest", "help").hasSizeGreaterThan(15);
        for (String name : ALL) {
            if (name.equals("help")) {
                continue;
            }
            CommandLine tree = FelixOffload.commandLine(new FelixOffload(), name, "--some-option");
            assertThat(tree.getSubcommands().keySet()).as("the tree for %s", name).containsExactly(name);
        }
    }

    @Test
    void withoutACommandNamedFirstTheTreeIsWhole() {
        for (List<String> args : List.of(List.<String>of(), List.of("--help"), List.of("-V"), List.of("help", "offload"),
                List.of("ofload"), List.of("--data-dir", "x", "offload"))) {
            CommandLine tree = FelixOffload.commandLine(new FelixOffload(), args.toArray(new String[0]));
            assertThat(tree.getSubcommands().keySet()).as("the tree for %s", args).containsExactlyElementsOf(ALL);
        }
    }

    @Test
    void whatAUserSeesWithoutNamingACommandIsUnchanged() {
        CliRun usage = CliRun.of("--help");
        assertThat(usage.exitCode()).isZero();
        for (String name : ALL) {
            assertThat(usage.out()).as("usage lists %s", name).contains("  " + name + " ");
        }

        CliRun misspelt = CliRun.of("ofload", "--data-dir", "x");
        assertThat(misspelt.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(misspelt.err()).contains("ofload").contains("Did you mean").contains("offload");

        CliRun help = CliRun.of("help", "restore");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("Usage: felix-offload restore");
    }

    @Test
    void aNamedCommandRunsAsBefore() {
        CliRun run = CliRun.of("shard-dir", "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Usage: felix-offload shard-dir");
    }
}
