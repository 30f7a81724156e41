package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.side.ReplicaFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * A shard's commit offset for offload eligibility: only records below it may be offloaded. A shard
 * without a {@code replica} file has no such limit (it is not replicated). A replica file that does
 * not decode allows nothing: what was committed cannot be known, so nothing is offloaded.
 */
public final class ReplicaCommit {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaCommit.class);

    private ReplicaCommit() {
    }

    public static OptionalLong of(Path shardDir) {
        if (!Files.exists(ReplicaFile.FILE.fileIn(shardDir))) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(ReplicaFile.load(shardDir).commit());
        } catch (CorruptionException e) {
            LOG.error("{}: {}; offloading nothing from this shard", DataRoot.Shard.nameOf(shardDir), e.getMessage());
            return OptionalLong.of(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
