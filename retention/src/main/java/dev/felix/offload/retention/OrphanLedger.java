package dev.felix.offload.retention;

import dev.felix.offload.log.DurableFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * When the orphan sweep first saw each orphan it has not deleted yet, kept in
 * {@value #FILE_NAME} in the data root. The stores report no modification time in a listing, so
 * the grace period is counted from the first sweep that found an object unnamed; an object whose
 * size or entity tag changed since counts as new.
 *
 * <p>UTF-8 text: the line {@code felix-orphan-ledger 1}, then one line per orphan,
 * {@code <first seen, epoch milliseconds> TAB <size> TAB <etag> TAB <key>}. Keys hold no control
 * characters, so a tab or a line feed never appears in one. A file that does not parse is read as
 * empty (with a warning): losing it only postpones deletions by one grace period. Replaced through
 * a temporary and an atomic move.
 */
final class OrphanLedger {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanLedger.class);

    static final String FILE_NAME = "offload.orphans";
    private static final String HEADER = "felix-orphan-ledger 1";

    /** One orphan as first seen. */
    record Sighting(Instant firstSeen, long size, String etag) {
    }

    private OrphanLedger() {
    }

    static Path fileIn(Path root) {
        return root.resolve(FILE_NAME);
    }

    static Map<String, Sighting> load(Path root) throws IOException {
        Path file = fileIn(root);
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return Map.of();
        } catch (java.nio.charset.CharacterCodingException e) {
            LOG.warn("{} is not UTF-8; starting the orphans' grace periods again", file);
            return Map.of();
        }
        Map<String, Sighting> out = new LinkedHashMap<>();
        String[] lines = text.split("\n", -1);
        if (lines.length < 2 || !lines[0].equals(HEADER) || !lines[lines.length - 1].isEmpty()) {
            LOG.warn("{} is not an orphan ledger; starting the orphans' grace periods again", file);
            return Map.of();
        }
        for (int i = 1; i < lines.length - 1; i++) {
            String[] f = lines[i].split("\t", 4);
            try {
                if (f.length != 4 || f[3].isEmpty()) {
                    throw new IllegalArgumentException("not four fields");
                }
                out.put(f[3], new Sighting(Instant.ofEpochMilli(Long.parseLong(f[0])), Long.parseLong(f[1]), f[2]));
            } catch (RuntimeException e) {
                LOG.warn("{} line {} does not parse ({}); starting the orphans' grace periods again", file, i + 1,
                        e.getMessage());
                return Map.of();
            }
        }
        return out;
    }

    static void save(Path root, Map<String, Sighting> sightings) throws IOException {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        for (Map.Entry<String, Sighting> e : sightings.entrySet()) {
            Sighting s = e.getValue();
            text.append(s.firstSeen().toEpochMilli()).append('\t').append(s.size()).append('\t')
                    .append(clean(s.etag())).append('\t').append(e.getKey()).append('\n');
        }
        DurableFiles.replace(fileIn(root), text.toString().getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
    }

    /** An entity tag as a field: never null, no tab or line break. */
    static String clean(String etag) {
        return etag == null ? "" : etag.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
