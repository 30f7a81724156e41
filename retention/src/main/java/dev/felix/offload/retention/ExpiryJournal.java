package dev.felix.offload.retention;

import dev.felix.offload.log.DurableFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The keys remote retention expired and has not deleted yet, in {@value #FILE_NAME} in the data
 * root: written durably before the manifest without their entries is saved, cleared as their deletes
 * succeed. An object no manifest names is deleted only on grounds someone recorded (see
 * {@link dev.felix.offload.copy.ObjectRelease}); for one that a crash or a store failure left between
 * retention's manifest save and its delete, this journal is that record: the next retention pass
 * deletes what it lists, once no live manifest names the key (an entry the save never removed was
 * not expired after all, and its line is dropped).
 *
 * <p>UTF-8 text: the line {@value #HEADER}, then one line per key, {@code <shard> TAB <key>}. Shard
 * names and keys hold no control characters. A file that does not parse is read as empty, with a
 * warning: what it listed is then kept in the store and reported as unrecorded history, never
 * deleted on a guess. Replaced through {@link DurableFiles} (fsynced: a line lost to a crash would
 * cost that object its grounds).
 */
final class ExpiryJournal {

    private static final Logger LOG = LoggerFactory.getLogger(ExpiryJournal.class);

    static final String FILE_NAME = "offload.expiring";
    private static final String HEADER = "felix-expiry-journal 1";

    private final Path file;
    /** Key to the shard that expired it, in the order written. */
    private final Map<String, String> keys;

    private ExpiryJournal(Path file, Map<String, String> keys) {
        this.file = file;
        this.keys = keys;
    }

    /** The journal of the data root {@code root}; empty when there is no file or it does not parse. */
    static ExpiryJournal load(Path root) throws IOException {
        Path file = root.resolve(FILE_NAME);
        Map<String, String> keys = new LinkedHashMap<>();
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return new ExpiryJournal(file, keys);
        } catch (java.nio.charset.CharacterCodingException e) {
            LOG.warn("{} is not UTF-8; the objects it listed are kept and reported, not deleted", file);
            return new ExpiryJournal(file, keys);
        }
        String[] lines = text.split("\n", -1);
        if (lines.length < 2 || !lines[0].equals(HEADER) || !lines[lines.length - 1].isEmpty()) {
            LOG.warn("{} is not an expiry journal; the objects it listed are kept and reported, not deleted", file);
            return new ExpiryJournal(file, keys);
        }
        for (int i = 1; i < lines.length - 1; i++) {
            int tab = lines[i].indexOf('\t');
            if (tab <= 0 || tab == lines[i].length() - 1) {
                LOG.warn("{}: line {} does not parse; the objects it listed are kept and reported, not deleted", file,
                        i + 1);
                return new ExpiryJournal(file, new LinkedHashMap<>());
            }
            keys.put(lines[i].substring(tab + 1), lines[i].substring(0, tab));
        }
        return new ExpiryJournal(file, keys);
    }

    /** Key to the shard that expired it. */
    synchronized Map<String, String> keys() {
        return Map.copyOf(keys);
    }

    synchronized boolean contains(String key) {
        return keys.containsKey(key);
    }

    /** Records, durably, that {@code shard} expired {@code expired}, before anything says so elsewhere. */
    synchronized void add(String shard, Collection<String> expired) throws IOException {
        if (expired.isEmpty()) {
            return;
        }
        for (String key : expired) {
            keys.put(key, shard);
        }
        write();
    }

    /** Forgets keys whose deletes succeeded (or that turned out not to be expired). */
    synchronized void remove(Collection<String> done) throws IOException {
        boolean changed = false;
        for (String key : done) {
            changed |= keys.remove(key) != null;
        }
        if (changed) {
            write();
        }
    }

    private void write() throws IOException {
        if (keys.isEmpty()) {
            // Nothing pending: the file goes, so an idle root keeps no empty journal around.
            if (Files.deleteIfExists(file)) {
                DurableFiles.fsyncDirectory(file.getParent());
            }
            return;
        }
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        keys.forEach((key, shard) -> text.append(shard).append('\t').append(key).append('\n'));
        DurableFiles.replace(file, text.toString().getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
    }
}
