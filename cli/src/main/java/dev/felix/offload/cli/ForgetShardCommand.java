package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.time.Clock;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload forget-shard}: deletes the objects of one shard the orphan sweep holds (see
 * {@link OrphanSweep#forget}). Without {@code --yes} it lists what would go and deletes nothing.
 * Exit 0 when done (or listed), 1 when refused or a delete failed, 2 on usage errors, 3 when the
 * store cannot be used.
 */
@Command(name = "forget-shard", mixinStandardHelpOptions = true,
        description = {"Delete the objects of one shard that the orphan sweep keeps: for a shard the data root "
                + "does not have (missing-shard), every segment and index object under its prefix; for one it has "
                + "(unrecorded-history), those its manifest does not name. A key any manifest of the root names is never "
                + "deleted. Without --yes, lists what would go and deletes nothing."})
final class ForgetShardCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    RootOptions rootOptions;

    @Option(names = "--node-id", paramLabel = "ID", description = "The node id the keys start with "
            + "(default: the configuration's, FELIX_NODE_ID, or the root's node-id file).")
    String nodeId;

    @Option(names = "--shard", required = true, paramLabel = "DIR", description = "The shard directory's name.")
    String shard;

    @Option(names = "--yes", description = "Delete; without it, only list.")
    boolean yes;

    @Option(names = "--json", description = "Print the outcome as one JSON object.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        RootAndStore where = rootOptions.resolve(nodeId, FelixOffload.environment(spec));
        if (!Files.isDirectory(where.root())) {
            throw new FelixOffload.UsageException("no data root directory at " + where.root());
        }
        String problem = OrphanSweep.shardNameProblem(shard);
        if (problem != null) {
            throw new FelixOffload.UsageException("--shard: " + problem);
        }
        SegmentKeys keys = new SegmentKeys(where.keyPrefix(), where.requireNodeId());
        PrintWriter out = spec.commandLine().getOut();
        OrphanSweep.Forgetting f;
        try (ObjectStore objectStore = Stores.openExisting(where.storeUri(), where.storeSetting(), where.root(),
                yes ? Stores.Use.WRITER : Stores.Use.READER);
             RootLock lock = RootLock.acquire(where.root())) {
            // Listing deletes nothing, so it only warns; deleting is refused on another root's claim.
            dev.felix.offload.root.NodeClaimCheck.Result claim = new dev.felix.offload.root.NodeClaimCheck(
                    new DataRoot(where.root()), objectStore, keys, where.storeSetting(), Clock.systemUTC())
                    .run(yes ? dev.felix.offload.root.NodeClaimCheck.Access.WRITE
                            : dev.felix.offload.root.NodeClaimCheck.Access.READ, false);
            claim.warning().ifPresent(w -> spec.commandLine().getErr().println("felix-offload: warning: " + w));
            // deletes go through the node's lease: a copy of this root fenced off meanwhile stops at once
            f = new OrphanSweep(new DataRoot(where.root()), claim.fenced(objectStore), keys, Clock.systemUTC(),
                    OrphanSweepSettings.defaults().withDeleteBatchSize(where.batchSize()), RetentionHook.none())
                    .forget(shard, yes, StopSignal.never());
        } catch (RootLock.HeldException e) {
            spec.commandLine().getErr().println("felix-offload: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return FelixOffload.EXIT_CORRUPT;
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
        String prefix = keys.shardPrefix(shard);
        if (json) {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeStringField("shard", f.shard());
                g.writeStringField("prefix", prefix);
                g.writeBooleanField("present", f.present());
                g.writeBooleanField("deleting", yes);
                g.writeNumberField("objects", f.keys().size());
                g.writeNumberField("bytes", f.bytes());
                g.writeNumberField("deleted", f.deleted().size());
                g.writeNumberField("kept", f.kept());
                if (f.refused() != null) {
                    g.writeStringField("refused", f.refused());
                }
                if (f.problem() != null) {
                    g.writeStringField("problem", f.problem());
                }
                g.writeEndObject();
            }
            out.println();
        } else {
            String what = f.present() ? "objects its manifest does not name" : "objects (the data root has no such shard)";
            if (f.refused() != null) {
                out.printf("refused, nothing deleted: %s%n", f.refused());
            } else if (!yes) {
                out.printf("%s: %d %s, %s, would be deleted; %d kept. Run again with --yes to delete them.%n", prefix,
                        f.keys().size(), what, Bytes.human(f.bytes()), f.kept());
            } else {
                out.printf("%s: %d of %d %s deleted (%s); %d kept%s%n", prefix, f.deleted().size(), f.keys().size(),
                        what, Bytes.human(f.bytes()), f.kept(), f.problem() == null ? "" : "; then: " + f.problem());
            }
        }
        out.flush();
        return f.refused() == null && f.problem() == null ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
    }
}
