package dev.felix.offload.retention;

import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectDeleter;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Finishes, on the remote side, the shard directories of deleted streams, which the broker moves
 * under the {@code .deleted/} of its level ({@code <root>/.deleted/}, {@code <root>/groups/.deleted/},
 * {@code <root>/dead-letters/.deleted/}, and the caches' too) and removes from there itself. For each
 * directory there that holds
 * an {@code offload.manifest}:
 * <ol>
 *   <li>every object the manifest names, segment and index, is deleted in batches;</li>
 *   <li>a {@value #DONE_FILE} file is written (durably) to record that the remote copies are gone,
 *       so the broker may remove the directory;</li>
 *   <li>the manifest is removed (and the directory fsynced).</li>
 * </ol>
 * The directory itself is the broker's: it is never removed here. One without a manifest has nothing
 * remote and is left alone. A crash anywhere leaves a state the next run finishes: objects already
 * deleted are deleted again harmlessly, and the manifest goes only once none of its objects is left
 * and the record is written. A manifest that does not decode is reported and its objects are kept,
 * since they cannot be known. Objects of the shard that its manifest never named (a crashed upload's)
 * are left to the orphan sweep.
 *
 * <p>Only objects {@link KeyOwnership} lets the deleted shard delete go: a key outside its prefix, or
 * one a live shard's manifest names (a stream created again under the same name may have it), is
 * not its own and stays; the directory still counts as finished, since what stays is another
 * shard's. While a live manifest cannot be read nothing is deleted and the directory waits.
 *
 * <p>The caller holds the root's {@link dev.felix.offload.root.RootLock}.
 */
public final class DeletedStreams {

    private static final Logger LOG = LoggerFactory.getLogger(DeletedStreams.class);

    /** Written in a deleted shard's directory once its objects are gone. */
    public static final String DONE_FILE = "offload.deleted";

    private final List<DataRoot.DeletedLevel> levels;
    private final ObjectDeleter store;
    private final RetentionHook hook;
    private final int deleteBatchSize;
    private final ObjectRelease release;
    private final LiveKeys live;

    /**
     * @param ownership which keys a shard may delete
     * @param live      what the root's live manifests name, read under the root's lock
     */
    public DeletedStreams(DataRoot root, ObjectDeleter store, RetentionHook hook, int deleteBatchSize,
                          KeyOwnership ownership, LiveKeys live) {
        this.release = new ObjectRelease(Objects.requireNonNull(ownership, "ownership"),
                Objects.requireNonNull(live, "live"));
        this.live = live;
        this.levels = root.deletedLevels();
        this.store = Objects.requireNonNull(store, "store");
        this.hook = Objects.requireNonNull(hook, "hook");
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
        this.deleteBatchSize = deleteBatchSize;
    }

    /**
     * Handles every directory under each level's {@code .deleted/} (the root's, and those of
     * {@code groups/}, {@code dead-letters/}, {@code caches/} and {@code counters/}); a failure on
     * one is reported and the rest go on. A deleted shard is named as it was live: its level's prefix
     * and its directory name ({@code groups/<dir>}), which is the path its keys carry.
     */
    public DeletedStreamsReport run(StopSignal stop) throws IOException {
        Map<String, Path> dirs = new java.util.TreeMap<>();
        for (DataRoot.DeletedLevel level : levels) {
            Path deletedDir = level.directory();
            if (!Files.isDirectory(deletedDir, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(deletedDir)) {
                for (Path entry : entries) {
                    if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                        dirs.put(level.container() + entry.getFileName(), entry);
                    }
                }
            } catch (java.nio.file.NoSuchFileException gone) {
                // the level's .deleted/ went meanwhile: nothing left there to finish
            }
        }
        if (dirs.isEmpty()) {
            return DeletedStreamsReport.nothing();
        }
        List<String> removed = new ArrayList<>();
        Map<String, String> failures = new LinkedHashMap<>();
        int objectsDeleted = 0;
        int objectsKept = 0;
        for (Map.Entry<String, Path> named : dirs.entrySet()) {
            if (stop.stopRequested()) {
                break;
            }
            String name = named.getKey();
            Path dir = named.getValue();
            try {
                Path manifestFile = ManifestStore.fileIn(dir);
                if (Files.exists(manifestFile, LinkOption.NOFOLLOW_LINKS)) {
                    Manifest manifest;
                    try {
                        manifest = ManifestStore.read(dir);
                    } catch (CorruptionException e) {
                        LOG.error("{}: deleted shard's manifest is unreadable; keeping the directory: {}", name,
                                e.getMessage());
                        failures.put(name, "manifest unreadable, directory kept: " + e.getMessage());
                        continue;
                    }
                    List<ObjectRelease.Verdict> verdicts = new ArrayList<>(manifest.size() * 2);
                    for (ManifestEntry e : manifest.entries()) {
                        for (String key : BatchDeletes.objectsOf(e)) {
                            verdicts.add(release.streamDeleted(name, key));
                        }
                    }
                    BatchDeletes.Split split = BatchDeletes.split(verdicts);
                    if (split.anyRefused(KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE)) {
                        failures.put(name, "nothing deleted, directory kept: the manifest of live shard(s) "
                                + live.unreadable() + " is unreadable, so which objects they need is unknown");
                        continue;
                    }
                    if (!split.kept().isEmpty()) {
                        objectsKept += split.kept().size();
                        LOG.warn("{}: {} objects its manifest names are not the deleted shard's and stay ({})", name,
                                split.kept().size(), BatchDeletes.describe(split.kept()));
                    }
                    List<ObjectRelease.Permit> keys = split.deletable();
                    BatchDeletes.Outcome outcome = BatchDeletes.delete(store, keys, deleteBatchSize, stop, hook,
                            RetentionStep.OBJECT_BATCH_DELETED, name);
                    objectsDeleted += outcome.deleted().size();
                    if (!outcome.left().isEmpty()) {
                        if (outcome.failure().isPresent()) {
                            failures.put(name, outcome.left().size() + " objects not deleted, directory kept: "
                                    + outcome.failure().get().label());
                        }
                        continue;
                    }
                    LOG.info("{}: deleted the {} objects of a deleted shard ({} entries)", name, keys.size(),
                            manifest.size());
                    hook.reached(RetentionStep.DELETED_SHARD_OBJECTS_DELETED, name, keys.size() + " objects");
                    DurableFiles.replace(dir.resolve(DONE_FILE), ("remote copies deleted: " + keys.size()
                            + " objects of " + manifest.size() + " segments; the directory may be removed\n")
                            .getBytes(java.nio.charset.StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
                    Files.delete(manifestFile);
                    DurableFiles.fsyncDirectory(dir);
                    hook.reached(RetentionStep.DELETED_SHARD_MANIFEST_REMOVED, name, manifestFile.toString());
                    removed.add(name);
                    LOG.info("{}: remote copies of the deleted shard are gone; recorded in {} for the broker", name,
                            DONE_FILE);
                }
            } catch (IOException e) {
                LOG.error("{}: could not finish the deleted shard", name, e);
                failures.put(name, "failed: " + e);
            }
        }
        return new DeletedStreamsReport(removed, objectsDeleted, failures, objectsKept);
    }
}
