package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.migrate.LegacyKeys;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.store.StoreException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload legacy-keys list|delete|migrate}: the objects a root's manifests name outside
 * its node's own prefix (keys without a node id from 0.6.0-preview.3, keys under a node id the root
 * had before {@code reidentify}), which no pass deletes as a side effect; see {@link LegacyKeys} and
 * docs/ownership.md.
 */
@Command(name = "legacy-keys", mixinStandardHelpOptions = true,
        description = {"Objects a root's manifests name outside its node's own prefix (keys without a node id, from "
                + "0.6.0-preview.3; keys under a node id it had before reidentify): list them, delete keys without a node "
                + "id that no other replica needs, or copy them under this node's id. See docs/ownership.md."},
        subcommands = {LegacyKeysCommand.ListKeys.class, LegacyKeysCommand.DeleteKeys.class,
                LegacyKeysCommand.MigrateKeys.class})
final class LegacyKeysCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new FelixOffload.UsageException("give a subcommand: list, delete or migrate (felix-offload legacy-keys "
                + "--help)");
    }

    /** The root and store every subcommand works on. */
    static final class Where {
        @Mixin
        RootOptions rootOptions;

        @Option(names = "--node-id", paramLabel = "ID", description = "This root's node id (default: as offload "
                + "finds it).")
        String nodeId;

        @Option(names = "--shard", paramLabel = "DIR", description = "Only this shard (its name under the data root).")
        String shard;

        RootAndStore resolve(java.util.Map<String, String> environment) throws IOException {
            RootAndStore where = rootOptions.resolve(nodeId, environment);
            if (!Files.isDirectory(where.root())) {
                throw new FelixOffload.UsageException("no data root directory at " + where.root());
            }
            if (shard != null) {
                String problem = OrphanSweep.shardNameProblem(shard);
                if (problem != null) {
                    throw new FelixOffload.UsageException("--shard: " + problem);
                }
            }
            return where;
        }
    }

    /** Opens the store, takes the root's lock and checks the claim ({@link RepairSession}): a writer writes through the node's lease. */
    private static <T> T withStore(RootAndStore where, RepairSession.Access access, PrintWriter err, Work<T> work)
            throws IOException {
        try {
            return RepairSession.run(where, access, RepairSession.Findings.IN_MEMORY, err, session -> work.run(
                    new LegacyKeys(session.root(), session.store(), session.keys(),
                            KeyOwnership.of(session.root(), session.keys()))));
        } catch (RootLock.HeldException e) {
            throw new FelixOffload.UsageException(e.getMessage());
        }
    }

    /** What every subcommand has: its spec, and the root and store it works on. */
    abstract static class Subcommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        Where where;

        /** {@link LegacyKeysCommand#withStore} on this subcommand's root and store. */
        <T> T withStore(RepairSession.Access access, Work<T> work) throws IOException {
            return LegacyKeysCommand.withStore(where.resolve(FelixOffload.environment(spec)), access, spec.commandLine().getErr(), work);
        }
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(LegacyKeys legacy) throws IOException, StoreException;
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List entries naming keys outside their "
            + "shard's own prefix, and objects without a node id that no manifest of this root names. Writes nothing.")
    static final class ListKeys extends Subcommand {
        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            LegacyKeys.Survey survey = withStore(RepairSession.Access.READ,
                    legacy -> legacy.survey(Optional.ofNullable(where.shard)));
            for (LegacyKeys.Named n : survey.named()) {
                out.printf("named %s shard=%s segment=%s key=%s%n", n.kind().label(), n.shard(),
                        Long.toUnsignedString(n.entry().segmentId()), n.entry().objectKey());
            }
            for (LegacyKeys.Unnamed u : survey.unnamed()) {
                out.printf("unnamed legacy-key shard=%s key=%s size=%d%n", u.shard(), u.key(), u.size());
            }
            for (String s : survey.unreadable()) {
                out.printf("unreadable shard=%s: its manifest cannot be read; what it names is unknown%n", s);
            }
            out.printf("%d entries name keys outside their shard's own prefix; %d objects without a node id (%s) are "
                            + "named by no manifest of this root%n", survey.named().size(), survey.unnamed().size(),
                    Bytes.human(survey.unnamed().stream().mapToLong(LegacyKeys.Unnamed::size).sum()));
            out.flush();
            return survey.unreadable().isEmpty() ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete objects without a node id that "
            + "no manifest of this root names: those of --shard, or the --key given. Only with "
            + "--no-other-replica-needs-them; without it, says what it would delete.")
    static final class DeleteKeys extends Subcommand {
        @Option(names = "--key", paramLabel = "KEY", description = "A key to delete (repeatable).")
        List<String> keys = new java.util.ArrayList<>();

        @Option(names = "--no-other-replica-needs-them", description = "You know that no other broker's replica of "
                + "these shards (sharing the store) names these keys any more: before node ids, replicas named the "
                + "same keys.")
        boolean confirmed;

        @Override
        public Integer call() throws IOException {
            if (where.shard == null && keys.isEmpty()) {
                throw new FelixOffload.UsageException("name the keys (--key) or their shard (--shard)");
            }
            PrintWriter out = spec.commandLine().getOut();
            LegacyKeys.Deletion d = withStore(confirmed ? RepairSession.Access.WRITE : RepairSession.Access.READ,
                    legacy -> legacy.delete(Optional.ofNullable(where.shard), keys, confirmed));
            for (Map.Entry<String, String> r : d.refused().entrySet()) {
                out.printf("refused %s: %s%n", r.getKey(), r.getValue());
            }
            long bytes = d.deletable().values().stream().mapToLong(Long::longValue).sum();
            if (!confirmed) {
                d.deletable().forEach((k, size) -> out.printf("would delete %s (%d bytes)%n", k, size));
                out.printf("%d keys without a node id (%s) would be deleted; nothing deleted: other brokers' replicas of "
                        + "these shards may still name them. Run again with --no-other-replica-needs-them once you "
                        + "know they do not.%n", d.deletable().size(), Bytes.human(bytes));
            } else {
                d.deleted().forEach(k -> out.printf("deleted %s%n", k));
                out.printf("%d of %d keys without a node id deleted (%s)%s%n", d.deleted().size(), d.deletable().size(),
                        Bytes.human(bytes), d.problem() == null ? "" : "; then: " + d.problem());
            }
            out.flush();
            return d.refused().isEmpty() && d.problem() == null ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
        }
    }

    @Command(name = "migrate", mixinStandardHelpOptions = true, description = "Copy each object an entry names "
            + "outside its shard's own prefix to the key the shard would upload it under now (create-only, proven "
            + "like any upload), then re-record the entry. The old objects stay.")
    static final class MigrateKeys extends Subcommand {
        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            List<LegacyKeys.Migration> done = withStore(RepairSession.Access.WRITE,
                    legacy -> legacy.migrate(Optional.ofNullable(where.shard)));
            boolean clean = true;
            for (LegacyKeys.Migration m : done) {
                m.migrated().forEach((from, to) -> out.printf("migrated shard=%s %s -> %s%n", m.shard(), from, to));
                m.skipped().forEach((key, why) -> out.printf("kept shard=%s %s: %s%n", m.shard(), key, why));
                if (m.problem() != null) {
                    out.printf("shard=%s: %s%n", m.shard(), m.problem());
                }
                clean &= m.skipped().isEmpty() && m.problem() == null;
            }
            out.printf("%d entries re-recorded under this node's keys; the old objects stay%n",
                    done.stream().mapToInt(m -> m.migrated().size()).sum());
            out.flush();
            return clean ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
        }
    }
}
