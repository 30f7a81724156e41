package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.store.remote.FindingsKeep;
import dev.felix.offload.store.remote.ServerFindings;
import dev.felix.offload.store.remote.ServerFindingsFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The data root's {@value #FILE_NAME} file: what the capability probe found each store's server to
 * do ({@link ServerFindingsFile} is its layout), so later commands and a restarted daemon on this
 * root reuse it instead of probing again. Written through {@link DurableFiles} (whole or absent
 * after a crash), only by commands that write to the store; the read-only ones (read, scrub,
 * restore) only read it. A plain undotted file at the root, like {@code offload-root-id}, so it is
 * never read as a shard.
 *
 * <p>It is a cache: a file that does not decode is ignored with a warning and replaced by the next
 * save; two processes saving at once may lose one's entry, which only costs a probe. Findings for
 * one endpoint and bucket are replaced whole; others are kept (up to 64).
 */
public final class StoreFindingsFile implements FindingsKeep {

    public static final String FILE_NAME = "offload-store-findings";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StoreFindingsFile.class);

    private final Path file;

    public StoreFindingsFile(DataRoot root) {
        this.file = root.path().resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    @Override
    public Optional<ServerFindings> load(ServerFindings.Key key) throws IOException {
        return readAll().stream().filter(f -> f.key().equals(key)).findFirst();
    }

    @Override
    public synchronized void save(ServerFindings findings) throws IOException {
        write(ServerFindingsFile.replacing(readAll(), findings));
    }

    @Override
    public synchronized void forget(ServerFindings.Key key) throws IOException {
        List<ServerFindings> all = new ArrayList<>(readAll());
        if (all.removeIf(f -> f.key().equals(key))) {
            write(all);
        }
    }

    @Override
    public String describe() {
        return file.toString();
    }

    private void write(List<ServerFindings> all) throws IOException {
        DurableFiles.replace(file, ServerFindingsFile.encode(all), DurableFiles.Sync.FULL);
    }

    /** Everything kept; nothing when the file is absent, too large or does not decode (it is only a cache). */
    private List<ServerFindings> readAll() throws IOException {
        byte[] bytes;
        try {
            if (Files.size(file) > 64 * 1024) {
                LOG.warn("{}: larger than a findings file may be; ignored (the next probe replaces it)", file);
                return List.of();
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return List.of();
        }
        try {
            return ServerFindingsFile.decode(bytes);
        } catch (ServerFindingsFile.UnreadableException e) {
            LOG.warn("{}: does not decode ({}); ignored (the next probe replaces it)", file, e.getMessage());
            return List.of();
        }
    }
}
