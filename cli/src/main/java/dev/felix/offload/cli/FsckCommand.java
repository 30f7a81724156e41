package dev.felix.offload.cli;

import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.recovery.Problem;
import dev.felix.offload.log.recovery.RecoveryOptions;
import dev.felix.offload.log.recovery.ShardInspection;
import dev.felix.offload.log.recovery.ShardInspection.Verdict;
import dev.felix.offload.log.recovery.ShardInspector;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.side.RegistrationFile;
import dev.felix.offload.log.side.RunStateFile;
import dev.felix.offload.log.side.StorageIdFile;
import dev.felix.offload.log.side.StreamMarkerFile;
import dev.felix.offload.manifest.ManifestStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload fsck --data-dir ROOT [--json] [--repair-checksum-tail]}: a read-only check of
 * every shard directory under a data root. It never writes. Exit 0 when every shard is ok or
 * repairable, 1 when any is corrupt or a name that may be a shard could not be read (an unreadable
 * directory, a link to nothing: never an "ok" over what was skipped), 2 on usage errors, 3 on I/O errors.
 */
@Command(name = "fsck", mixinStandardHelpOptions = true,
        description = {"Check every shard under a data root, read-only: segments in full, indexes, contiguity.",
                "Exit 0 when every shard is ok or repairable, 1 when any is corrupt or could not be read, 2 on "
                        + "usage errors."})
final class FsckCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", required = true, paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Option(names = "--repair-checksum-tail",
            description = "Judge checksum, offset and length damage at the end of a shard's newest segment as "
                    + "repairable, as recovery would with this opt-in. Nothing is written either way.")
    boolean repairChecksumTail;

    /**
     * A shard's report: the inspection plus the manifest, which only this module can read.
     *
     * @param provenCopies for each damaged segment whose manifest entry stands, the key of its copy,
     *                     verified at upload: reads fall back to it and retention replaces the local
     *                     file with it once it re-verifies
     */
    record ShardReport(String name, Verdict verdict, long records, long firstOffset, long nextOffset,
                       List<Problem> problems, Map<Long, String> provenCopies) {
    }

    @Override
    public Integer call() throws IOException {
        if (!Files.isDirectory(dataDir)) {
            throw new FelixOffload.UsageException("no data root directory at " + dataDir);
        }
        RecoveryOptions options = new RecoveryOptions(repairChecksumTail);
        // Every shard, caches and counters included: they are never offloaded, but their files are checked.
        DataRoot.Listing listing = new DataRoot(dataDir).list();
        List<DataRoot.Shard> shards = listing.shards();
        List<DataRoot.Unreadable> unreadable = listing.unreadable();
        List<ShardReport> reports = new ArrayList<>(shards.size());
        Looks looks = new Looks();
        PrintWriter err = spec.commandLine().getErr();
        boolean progress = System.console() != null && !json;
        for (int i = 0; i < shards.size(); i++) {
            DataRoot.Shard shard = shards.get(i);
            if (progress) {
                err.printf("checking %s (%d of %d)%n", shard.name(), i + 1, shards.size());
                err.flush();
            }
            ShardReport r = inspectSteadily(shard, options, looks);
            if (r != null) {
                reports.add(r);
            }
        }
        List<Problem> rootProblems = rootProblems(dataDir);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            writeJson(out, reports, rootProblems, looks, unreadable);
        } else {
            writeText(out, reports, rootProblems, unreadable);
            if (looks.vanishedFiles > 0 || looks.vanishedShards > 0) {
                out.printf("(%d files and %d shards were removed while fsck read them, by the broker or offload; "
                        + "each shard is reported as it was after)%n", looks.vanishedFiles, looks.vanishedShards);
            }
        }
        out.flush();
        boolean corrupt = reports.stream().anyMatch(s -> s.verdict() == Verdict.CORRUPT) || !rootProblems.isEmpty()
                || !unreadable.isEmpty();
        return corrupt ? FelixOffload.EXIT_CORRUPT : FelixOffload.EXIT_OK;
    }

    /** What vanished under fsck while it read: ordinary beside a live broker and offload. */
    static final class Looks {
        int vanishedFiles;
        int vanishedShards;
    }

    /** How many times a shard is looked at again when files vanish under the inspection. */
    static final int MAX_LOOKS = 5;

    /**
     * Inspects a shard; a file unlinked between the listing and its opening (a segment offload or the
     * broker's retention removed) is counted and the shard looked at again, as it is now. Only a file
     * still listed on the next look that still cannot be opened is an error. Null when the whole shard
     * directory went (a stream deleted meanwhile).
     */
    private static ShardReport inspectSteadily(DataRoot.Shard shard, RecoveryOptions options, Looks looks)
            throws IOException {
        String stillListed = null;
        for (int look = 1; ; look++) {
            try {
                return report(shard.name(), shard.directory(), ShardInspector.inspect(shard.name(), shard.directory(), options,
                        ShardInspector.Depth.EVERY_SEGMENT));
            } catch (NoSuchFileException gone) {
                if (!Files.isDirectory(shard.directory())) {
                    looks.vanishedShards++;
                    return null;
                }
                Path missing = gone.getFile() == null ? null : Path.of(gone.getFile());
                boolean listed = missing != null && Files.exists(missing, LinkOption.NOFOLLOW_LINKS);
                if (listed && gone.getFile().equals(stillListed) || look >= MAX_LOOKS) {
                    throw gone; // there on two looks, yet not to be opened: a real problem
                }
                stillListed = listed ? gone.getFile() : null;
                if (!listed) {
                    looks.vanishedFiles++;
                }
            }
        }
    }

    /** Adds the manifest, which is authoritative: present and undecodable makes the shard corrupt. */
    private static ShardReport report(String name, Path dir, ShardInspection s) throws IOException {
        List<Problem> problems = new ArrayList<>(s.problems());
        Verdict verdict = s.verdict();
        Map<Long, String> proven = new java.util.TreeMap<>(Long::compareUnsigned);
        try {
            java.util.Map<Long, String> keys = new java.util.HashMap<>();
            ManifestStore.read(dir).entries().forEach(e -> keys.put(e.segmentId(), e.objectKey()));
            for (Problem p : problems) {
                String key = keys.get(p.segmentId());
                // a segment not contiguous with a damaged one below it is that one's consequence
                boolean consequence = p.is(dev.felix.offload.log.format.CorruptionKind.OFFSET_OUT_OF_ORDER) && p.position() < 32;
                if (key != null && !consequence && p.file().endsWith(dev.felix.offload.log.SegmentFile.LOG_SUFFIX)) {
                    proven.put(p.segmentId(), key);
                }
            }
        } catch (CorruptionException e) {
            problems.add(new Problem(ManifestStore.FILE_NAME, e.kind().specName(), CorruptionSite.UNKNOWN_SEGMENT,
                    e.site().position(), false, false, e.detail() + "; the manifest is authoritative: once local "
                    + "segments are gone it is the only record of their copies", e));
            verdict = Verdict.CORRUPT;
        }
        return new ShardReport(name, verdict, s.records(), s.firstOffset(), s.nextOffset(), problems, proven);
    }

    /** The data root's identity files and stream markers: any that does not decode is a problem. */
    private static List<Problem> rootProblems(Path root) throws IOException {
        List<Problem> problems = new ArrayList<>();
        rootFile(problems, StorageIdFile.FILE_NAME, () -> StorageIdFile.FILE.load(root));
        rootFile(problems, RunStateFile.FILE_NAME, () -> RunStateFile.FILE.load(root));
        rootFile(problems, RegistrationFile.FILE_NAME, () -> RegistrationFile.FILE.load(root));
        rootFile(problems, DataRoot.STREAMS_DIR, () -> StreamMarkerFile.loadAll(root));
        return problems;
    }

    private interface RootLoad {
        Object load() throws IOException, CorruptionException;
    }

    private static void rootFile(List<Problem> problems, String name, RootLoad load) throws IOException {
        try {
            load.load();
        } catch (CorruptionException e) {
            String file = e.site().file() != null ? e.site().file() : name;
            problems.add(new Problem(file, e.kind().specName(), CorruptionSite.UNKNOWN_SEGMENT, e.site().position(),
                    false, false, e.detail(), e));
        }
    }

    private static void writeProblems(JsonGenerator g, List<Problem> problems) throws IOException {
        writeProblems(g, problems, Map.of());
    }

    private static void writeProblems(JsonGenerator g, List<Problem> problems, Map<Long, String> provenCopies)
            throws IOException {
        g.writeArrayFieldStart("problems");
        for (Problem p : problems) {
            g.writeStartObject();
            g.writeStringField("file", p.file());
            g.writeStringField("kind", p.kind());
            if (p.segmentId() == CorruptionSite.UNKNOWN_SEGMENT) {
                g.writeNullField("segment");
            } else {
                Json.u64(g, "segment", p.segmentId());
            }
            g.writeNumberField("position", p.position());
            g.writeBooleanField("repairable", p.repairable());
            if (p.cause() != null) {
                CorruptionDetails.writeValues(g, p.cause());
            }
            g.writeStringField("message", p.message());
            String copy = provenCopies.get(p.segmentId());
            if (copy != null) {
                g.writeStringField("proven_copy", copy);
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void writeJson(PrintWriter out, List<ShardReport> reports, List<Problem> rootProblems, Looks looks,
                                  List<DataRoot.Unreadable> unreadable) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeNumberField("vanished_files", looks.vanishedFiles);
            g.writeNumberField("vanished_shards", looks.vanishedShards);
            g.writeArrayFieldStart("shards");
            for (ShardReport s : reports) {
                g.writeStartObject();
                g.writeStringField("dir", s.name());
                g.writeStringField("verdict", s.verdict().label());
                g.writeNumberField("records", s.records());
                Json.u64(g, "first_offset", s.firstOffset());
                Json.u64(g, "next_offset", s.nextOffset());
                writeProblems(g, s.problems(), s.provenCopies());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("unreadable");
            for (DataRoot.Unreadable u : unreadable) {
                g.writeStartObject();
                g.writeStringField("dir", u.name());
                g.writeStringField("path", u.path().toString());
                g.writeStringField("reason", u.reason());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("root");
            writeProblems(g, rootProblems);
            g.writeEndObject();
            g.writeEndObject();
        }
        out.println();
    }

    private static void writeText(PrintWriter out, List<ShardReport> inspections, List<Problem> rootProblems,
                                  List<DataRoot.Unreadable> unreadable) {
        Map<Verdict, Integer> counts = new EnumMap<>(Verdict.class);
        for (Problem p : rootProblems) {
            out.printf("data root: %s: %s at byte %d, NOT repairable: %s%n", p.file(), p.kind(), p.position(), p.message());
        }
        for (ShardReport s : inspections) {
            counts.merge(s.verdict(), 1, Integer::sum);
            out.printf("%s: %s, %d records, offsets %s to %s%n", s.name(), s.verdict().label(), s.records(),
                    Long.toUnsignedString(s.firstOffset()), Long.toUnsignedString(s.nextOffset()));
            for (Problem p : s.problems()) {
                out.printf("  %s: %s at byte %d, %s: %s%n", p.file(), p.kind(), p.position(),
                        p.repairable() ? "repairable" : "NOT repairable", p.message());
                String copy = s.provenCopies().get(p.segmentId());
                if (copy != null) {
                    out.printf("    segment %s has a copy proven at upload: %s (reads are served from it; retention "
                            + "replaces the local file with it once it re-verifies)%n",
                            Long.toUnsignedString(p.segmentId()), copy);
                }
            }
        }
        for (DataRoot.Unreadable u : unreadable) {
            out.printf("%s: unreadable, NOT checked: %s%n", u.name(), u.reason());
        }
        out.printf("%d shards: %d ok, %d repairable, %d corrupt%s%n", inspections.size() + unreadable.size(),
                counts.getOrDefault(Verdict.OK, 0), counts.getOrDefault(Verdict.REPAIRABLE, 0),
                counts.getOrDefault(Verdict.CORRUPT, 0), unreadable.isEmpty() ? "" : ", " + unreadable.size() + " unreadable");
    }
}
