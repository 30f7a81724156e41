package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * One kind of side file at a fixed name in its directory (a data root or a shard directory): the
 * longest file of the kind, whether its replace is flushed, and its codec. Finding, bounding,
 * reading, decoding, replacing and removing are the same for every kind, so they are written here
 * once and each codec class states only its layout and its load rule.
 *
 * <p>Two load rules exist. An <b>authoritative</b> file ({@link #load}) holds what nothing else can
 * rebuild: absent is empty, and a file that does not decode fails, and is left as it is for an
 * operator. A <b>derived</b> file ({@link #loadDerived}) is a cache of what the log holds: one that
 * does not decode is ignored with the reason and rebuilt.
 *
 * @param <T> what a file of this kind holds
 */
public final class SideFileKind<T> {

    /** The exact bytes of a value. */
    @FunctionalInterface
    interface Encoder<T> {
        byte[] encode(T value);
    }

    private final String fileName;
    private final int maxLength;
    private final DurableFiles.Sync sync;
    private final SideFiles.Decoder<T> decoder;
    private final Encoder<T> encoder;

    SideFileKind(String fileName, int maxLength, DurableFiles.Sync sync, SideFiles.Decoder<T> decoder,
                 Encoder<T> encoder) {
        this.fileName = fileName;
        this.maxLength = maxLength;
        this.sync = sync;
        this.decoder = decoder;
        this.encoder = encoder;
    }

    /** The file's name in its directory. */
    public String fileName() {
        return fileName;
    }

    /** The file of this kind in {@code dir}. */
    public Path fileIn(Path dir) {
        return dir.resolve(fileName);
    }

    /** Where corruption in the file of {@code dir} is reported: the directory's name, the file, byte 0. */
    public CorruptionSite siteIn(Path dir) {
        return CorruptionSite.inFile(SideFiles.directoryName(dir), fileName, 0);
    }

    /**
     * The value in {@code dir} by the authoritative rule: empty without a file.
     *
     * @throws CorruptionException when the file is present and does not decode; it is left as it is
     * @throws IOException         when {@code dir} is missing or the file cannot be read
     */
    public Optional<T> load(Path dir) throws IOException, CorruptionException {
        SideFiles.requireDirectory(dir);
        return Optional.ofNullable(SideFiles.loadAuthoritative(fileIn(dir), maxLength, siteIn(dir), decoder));
    }

    /**
     * The value in {@code dir} by the derived rule: {@link DerivedLoad.Status#ABSENT} without a file,
     * {@link DerivedLoad.Status#IGNORED} (with the reason) when it does not decode.
     *
     * @throws IOException when {@code dir} is missing or the file cannot be read
     */
    public DerivedLoad<T> loadDerived(Path dir) throws IOException {
        SideFiles.requireDirectory(dir);
        return SideFiles.loadDerived(fileIn(dir), maxLength, siteIn(dir), decoder);
    }

    /** Makes {@code value} the file's content: temporary, atomic rename, and the fsyncs of this kind. */
    public void save(Path dir, T value) throws IOException {
        save(dir, value, step -> { });
    }

    /** As {@link #save(Path, Object)}, reporting each step of the replace; for crash tests. */
    public void save(Path dir, T value, DurableFiles.StepListener steps) throws IOException {
        DurableFiles.replace(fileIn(dir), encoder.encode(value), sync, steps);
    }

    /**
     * Removes the file durably (the directory is fsynced, so a crash cannot bring it back), as a
     * truncation must before anything is written past the cut. Returns whether there was one.
     */
    public boolean remove(Path dir) throws IOException {
        return SideFiles.removeDurably(fileIn(dir));
    }
}
