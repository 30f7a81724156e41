package dev.felix.offload.log;

import dev.felix.offload.log.recovery.RecoveryOptions;
import dev.felix.offload.log.recovery.ShardInspection;
import dev.felix.offload.log.recovery.ShardInspector;

import java.io.IOException;
import java.nio.file.Path;

/** Helpers shared by the shard log tests. */
final class ShardLogTestSupport {

    private ShardLogTestSupport() {
    }

    /** The verdict fsck would give, with every problem (indexes included) required to be absent for "ok". */
    static String fsckVerdict(Path shardDir) throws IOException {
        ShardInspection inspection = ShardInspector.inspect(shardDir, RecoveryOptions.DEFAULT);
        if (!inspection.problems().isEmpty()) {
            return "problems: " + inspection.problems();
        }
        return inspection.verdict().label();
    }
}
