package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ShardDirCommandTest {

    @Test
    void printsTheSpecExample() {
        CliRun run = CliRun.of("shard-dir", "--tenant", "acme", "--namespace", "default", "--stream", "orders",
                "--shard", "0");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).isEqualTo("acme_default_orders_0-0d3aed4b998d2798" + System.lineSeparator());
    }

    @Test
    void appendsTheIncarnationAsSixteenHexDigits() {
        CliRun run = CliRun.of("shard-dir", "--tenant", "acme", "--namespace", "default", "--stream", "orders",
                "--shard", "0", "--incarnation", "0x6411a0ccf2e40");
        assertThat(run.out().strip()).isEqualTo("acme_default_orders_0-0d3aed4b998d2798-0006411a0ccf2e40");
    }

    @Test
    void refusesAShardOutsideU32() {
        CliRun run = CliRun.of("shard-dir", "--tenant", "a", "--namespace", "b", "--stream", "c", "--shard", "4294967296");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(run.err()).contains("--shard");
    }
}
