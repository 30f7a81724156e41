package dev.felix.offload.cli;

import dev.felix.offload.log.ShardKey;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** {@code felix-offload shard-dir ...}: prints a shard's directory name, for other tools to call. */
@Command(name = "shard-dir", mixinStandardHelpOptions = true,
        description = "Print the directory name of a stream shard under the data root.")
final class ShardDirCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--tenant", required = true)
    String tenant;

    @Option(names = "--namespace", required = true)
    String namespace;

    @Option(names = "--stream", required = true)
    String stream;

    @Option(names = "--shard", required = true, description = "The shard number (unsigned 32-bit).")
    long shard;

    @Option(names = "--incarnation", defaultValue = "0",
            description = "The stream's incarnation, decimal or 0x-prefixed hex; 0 (the default) for none.")
    String incarnation;

    @Override
    public Integer call() {
        if (shard < 0 || shard > 0xFFFF_FFFFL) {
            throw new FelixOffload.UsageException("--shard must be between 0 and 4294967295, got " + shard);
        }
        long inc;
        try {
            inc = incarnation.startsWith("0x") || incarnation.startsWith("0X")
                    ? Long.parseUnsignedLong(incarnation.substring(2), 16)
                    : Long.parseUnsignedLong(incarnation);
        } catch (NumberFormatException e) {
            throw new FelixOffload.UsageException("--incarnation must be an unsigned 64-bit number, got " + incarnation);
        }
        spec.commandLine().getOut().println(new ShardKey(tenant, namespace, stream, (int) shard, inc).directoryName());
        spec.commandLine().getOut().flush();
        return FelixOffload.EXIT_OK;
    }
}
