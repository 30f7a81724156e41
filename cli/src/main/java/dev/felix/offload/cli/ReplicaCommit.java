package dev.felix.offload.cli;

import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * A shard's commit offset, from its {@code replica} file. Until that file's codec is wired in, no
 * shard has one, and every sealed segment is eligible.
 */
final class ReplicaCommit {

    private ReplicaCommit() {
    }

    static OptionalLong of(Path shardDir) {
        return OptionalLong.empty();
    }
}
