package dev.felix.offload.store.fs;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.ChecksumMismatchException;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.InvalidKeyException;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * The embedded default store: each key is a file under a root directory, its {@code /} segments
 * directories.
 *
 * <p>Puts are crash-safe: the body goes to a temporary file in the root's staging directory
 * ({@code .felix-staging}, same file system), is fsynced, then moved into place atomically (or,
 * for a create-only put, hard-linked, which fails if the key exists), and the key's directory is
 * fsynced (and the parents of directories the put created), so a reader never sees half an object
 * and a crash leaves either the old object or the new one. The CRC32 and user metadata travel as
 * user extended attributes of the file ({@code user.felix.*}), set on the temporary file before
 * the move, so they change atomically with the bytes; on a file system without user extended
 * attributes the store keeps no CRC32 and refuses puts carrying metadata.
 *
 * <p>Keys are checked by {@link KeyRules} and, after normalisation, must resolve inside the root
 * (existing symbolic links are followed and checked too). A key whose path collides with another
 * key's directory (say {@code a} when {@code a/b} exists) is refused with
 * {@link StoreRejectedException}; deletes remove directories left empty.
 */
public final class FilesystemStore implements ObjectStore, dev.felix.offload.store.ObjectCopier {
    static final String STAGING = KeyRules.RESERVED_PREFIX + "staging";
    private static final String ATTR_CRC32 = "felix.crc32";
    private static final String ATTR_META = "felix.meta.";
    private static final Duration STALE_TEMP_AGE = Duration.ofHours(24);

    private final Path root;
    private final Path staging;
    private final boolean userAttributes;
    /**
     * Held while a put makes its parent directories and links its file in, and while a delete removes
     * a file and prunes the directories it left empty: without it one thread's prune removes the
     * directory another thread's put just made (or the one whose removal another delete syncs).
     */
    private final Object tree = new Object();

    private FilesystemStore(Path root, Path staging, boolean userAttributes) {
        this.root = root;
        this.staging = staging;
        this.userAttributes = userAttributes;
    }

    /**
     * Opens (creating it when missing) the store rooted at {@code root}, and removes staging files
     * older than a day that a crashed put left behind.
     *
     * @throws IllegalArgumentException naming the root when it exists but is not a directory
     * @throws IOException when the root cannot be created or read
     */
    public static FilesystemStore open(Path root) throws IOException {
        Path absolute = root.toAbsolutePath().normalize();
        if (Files.exists(absolute) && !Files.isDirectory(absolute)) {
            throw new IllegalArgumentException("filesystem store root " + absolute + " is not a directory");
        }
        Files.createDirectories(absolute);
        Path real = absolute.toRealPath();
        Path staging = real.resolve(STAGING);
        Files.createDirectories(staging);
        removeStaleTemps(staging);
        boolean attrs = Files.getFileStore(staging).supportsFileAttributeView(UserDefinedFileAttributeView.class)
                && StoreFiles.probeUserAttributes(staging);
        return new FilesystemStore(real, staging, attrs);
    }

    public Path root() {
        return root;
    }

    @Override
    public Set<StoreCapability> capabilities() {
        EnumSet<StoreCapability> caps = EnumSet.of(StoreCapability.CREATE_ONLY_PUT, StoreCapability.CRC32_VERIFIED_ON_PUT);
        if (userAttributes) {
            caps.add(StoreCapability.CRC32_STORED);
            caps.add(StoreCapability.USER_METADATA);
        }
        return caps;
    }

    @Override
    public Optional<dev.felix.offload.store.ObjectCopier> copier() {
        return Optional.of(this);
    }

    @Override
    public String describe() {
        return "filesystem store at " + root;
    }

    @Override
    public void close() {}

    // ---- upload

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        Path target = resolve(key);
        if (!options.userMetadata().isEmpty() && !userAttributes) {
            throw new CapabilityMissingException("the file system under " + root
                    + " has no user extended attributes, so it cannot keep user metadata for key '" + key + "'", key, null, null);
        }
        Path temp = null;
        try {
            temp = Files.createTempFile(staging, "put-", ".tmp");
            long crc = StoreFiles.copyWithCrc(body, temp);
            if (options.crc32().isPresent() && options.crc32().getAsLong() != crc) {
                throw new IntegrityRejectedException(String.format(
                        "put of key '%s' refused: its bytes have CRC32 %08x, the caller gave %08x",
                        key, crc, options.crc32().getAsLong()), key, null, null);
            }
            if (userAttributes) {
                writeAttributes(temp, crc, options.userMetadata());
            }
            List<Path> created;
            synchronized (tree) {
                created = createParents(target.getParent());
                if (options.createOnly()) {
                    try {
                        Files.createLink(target, temp);
                    } catch (FileAlreadyExistsException e) {
                        throw new PreconditionFailedException("create-only put of key '" + key + "' refused: it exists", key, null, e);
                    }
                } else {
                    if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                        throw collision(key, null);
                    }
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    temp = null;
                }
            }
            StoreFiles.fsyncDirectory(target.getParent());
            for (Path dir : created) {
                StoreFiles.fsyncDirectory(dir.getParent());
            }
            return new PutResult(key, body.length(), etagOf(target), 1);
        } catch (AtomicMoveNotSupportedException e) {
            throw new StoreRejectedException("the file system under " + root + " cannot move files atomically", key, null, e);
        } catch (FileAlreadyExistsException | NotDirectoryException | DirectoryNotEmptyException e) {
            throw collision(key, e);
        } catch (java.nio.file.AccessDeniedException e) {
            throw new AccessDeniedException("put of key '" + key + "' denied by the file system: " + e.getMessage(), key, null, e);
        } catch (IOException e) {
            throw new TransientStoreException("put of key '" + key + "' failed: " + StoreFiles.describe(e), key, null, e);
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException ignored) {
                    // a leftover temp is removed by a later open once stale
                }
            }
        }
    }

    private StoreRejectedException collision(String key, Exception cause) {
        return new StoreRejectedException("key '" + key + "' collides with another key's path in the filesystem store "
                + "(a key cannot be both an object and a prefix of other keys' directories)", key, null, cause);
    }

    private static void writeAttributes(Path file, long crc, Map<String, String> metadata) throws IOException {
        UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
        view.write(ATTR_CRC32, StandardCharsets.US_ASCII.encode(String.format("%08x", crc)));
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            view.write(ATTR_META + e.getKey(), StandardCharsets.US_ASCII.encode(e.getValue()));
        }
    }

    /** Creates missing directories up to {@code dir}, returning those it created, outermost first. */
    private List<Path> createParents(Path dir) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = dir; p != null && !p.equals(root) && !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
            missing.push(p);
        }
        List<Path> created = new ArrayList<>();
        for (Path p : missing) {
            try {
                Files.createDirectory(p);
                created.add(p);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    throw e;
                }
            }
        }
        return created;
    }

    // ---- copy

    /**
     * A copy of the source file under the target key, put as any upload is (create-only, its CRC-32
     * attribute taken from the source's where it has one): see {@link dev.felix.offload.store.ObjectCopier}.
     */
    @Override
    public PutResult copy(String sourceKey, String targetKey) throws StoreException {
        ObjectHead source = head(sourceKey);
        PutOptions options = PutOptions.defaults().withNoReplace();
        if (source.crc32().isPresent()) {
            options = options.withCrc32(source.crc32().getAsLong());
        }
        try {
            return put(targetKey, UploadBody.ofFile(resolve(sourceKey)), options);
        } catch (IOException e) {
            throw mapRead(sourceKey, e);
        }
    }

    // ---- fetch

    @Override
    public ObjectHead head(String key) throws StoreException {
        Path file = resolve(key);
        try {
            BasicFileAttributes attrs = regularFile(key, file);
            Map<String, String> metadata = new HashMap<>();
            OptionalLong crc = OptionalLong.empty();
            if (userAttributes) {
                UserDefinedFileAttributeView view = Files.getFileAttributeView(file, UserDefinedFileAttributeView.class);
                for (String name : view.list()) {
                    if (name.equals(ATTR_CRC32)) {
                        crc = OptionalLong.of(Long.parseLong(StoreFiles.readAttribute(view, name), 16));
                    } else if (name.startsWith(ATTR_META)) {
                        metadata.put(name.substring(ATTR_META.length()), StoreFiles.readAttribute(view, name));
                    }
                }
            }
            return new ObjectHead(key, attrs.size(), etagOf(attrs), metadata, crc);
        } catch (NumberFormatException e) {
            return headWithoutCrc(key, file);
        } catch (IOException e) {
            throw mapRead(key, e);
        }
    }

    private ObjectHead headWithoutCrc(String key, Path file) throws StoreException {
        try {
            BasicFileAttributes attrs = regularFile(key, file);
            return new ObjectHead(key, attrs.size(), etagOf(attrs), Map.of(), OptionalLong.empty());
        } catch (IOException e) {
            throw mapRead(key, e);
        }
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        Path file = resolve(key);
        try (FileChannel channel = openForRead(key, file)) {
            long size = channel.size();
            if (range.offset() >= size || range.end() > size) {
                throw new InvalidRangeException("range " + range + " of key '" + key + "' is outside the object's "
                        + size + " bytes", key, null, null);
            }
            byte[] out = new byte[range.length()];
            readFully(channel, out, range.offset(), key);
            return out;
        } catch (IOException e) {
            throw mapRead(key, e);
        }
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        Path file = resolve(key);
        try (FileChannel channel = openForRead(key, file)) {
            long size = channel.size();
            if (size > maxSize) {
                throw new InvalidRangeException("key '" + key + "' holds " + size + " bytes, more than the limit of "
                        + maxSize, key, null, null);
            }
            byte[] out = new byte[(int) size];
            readFully(channel, out, 0, key);
            CRC32 crc = new CRC32();
            crc.update(out);
            checkCrc(key, expectedCrc32, crc.getValue());
            return out;
        } catch (IOException e) {
            throw mapRead(key, e);
        }
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        Path file = resolve(key);
        Path dir = target.toAbsolutePath().getParent();
        Path temp = null;
        try (FileChannel in = openForRead(key, file)) {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            temp = Files.createTempFile(dir, "." + target.getFileName(), ".part");
            CRC32 crc = new CRC32();
            long copied = 0;
            ByteBuffer buffer = ByteBuffer.allocate(256 * 1024);
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                while (in.read(buffer, copied) > 0) {
                    buffer.flip();
                    crc.update(buffer.duplicate());
                    copied += buffer.remaining();
                    while (buffer.hasRemaining()) {
                        out.write(buffer);
                    }
                    buffer.clear();
                }
            }
            checkCrc(key, expectedCrc32, crc.getValue());
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            temp = null;
            return new DownloadResult(copied, etagOf(attrs), crc.getValue());
        } catch (IOException e) {
            throw mapRead(key, e);
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException ignored) {
                    // best effort: the temp has a dot name beside the target
                }
            }
        }
    }

    private static void checkCrc(String key, OptionalLong expected, long actual) throws ChecksumMismatchException {
        if (expected.isPresent() && expected.getAsLong() != actual) {
            throw new ChecksumMismatchException(String.format("key '%s' read with CRC32 %08x, expected %08x",
                    key, actual, expected.getAsLong()), key, null, null);
        }
    }

    private FileChannel openForRead(String key, Path file) throws IOException, StoreException {
        regularFile(key, file);
        return FileChannel.open(file, StandardOpenOption.READ);
    }

    private static BasicFileAttributes regularFile(String key, Path file) throws IOException, ObjectNotFoundException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw notFound(key, e);
        }
        if (!attrs.isRegularFile()) {
            throw notFound(key, null);
        }
        return attrs;
    }

    private static void readFully(FileChannel channel, byte[] out, long position, String key) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(out);
        long at = position;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, at);
            if (n < 0) {
                throw new IOException("key '" + key + "' shrank while being read");
            }
            at += n;
        }
    }

    private static ObjectNotFoundException notFound(String key, Exception cause) {
        return new ObjectNotFoundException("key '" + key + "' not found", key, null, cause);
    }

    private static StoreException mapRead(String key, IOException e) {
        if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
            return notFound(key, e);
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return new AccessDeniedException("read of key '" + key + "' denied by the file system", key, null, e);
        }
        return new TransientStoreException("read of key '" + key + "' failed: " + e, key, null, e);
    }

    private static String etagOf(Path file) throws IOException {
        return etagOf(Files.readAttributes(file, BasicFileAttributes.class));
    }

    /** A new inode per put (the temp file) and the modification time make each put's tag differ. */
    static String etagOf(BasicFileAttributes attrs) {
        FileTime modified = attrs.lastModifiedTime();
        Instant at = modified.toInstant();
        String identity = String.valueOf(attrs.fileKey());
        return HexFormat.of().toHexDigits(at.getEpochSecond() * 1_000_000_000L + at.getNano())
                + "-" + Long.toHexString(attrs.size()) + "-" + Integer.toHexString(identity.hashCode());
    }

    // ---- list

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        String checked = KeyRules.checkPrefix(prefix);
        if (maxKeys < 1 || maxKeys > 1000) {
            throw new IllegalArgumentException("list max-keys must be in [1, 1000]: " + maxKeys);
        }
        // Walk only the deepest directory the prefix fixes; the rest of the tree cannot match.
        int slash = checked.lastIndexOf('/');
        Path start = slash < 0 ? root : root.resolve(checked.substring(0, slash)).normalize();
        if (!start.startsWith(root) || !Files.isDirectory(start, LinkOption.NOFOLLOW_LINKS)) {
            return new ListPage(List.of(), Optional.empty());
        }
        String base = start.equals(root) ? "" : root.relativize(start).toString()
                .replace(start.getFileSystem().getSeparator(), "/") + "/";
        List<ObjectSummary> entries = new ArrayList<>();
        try {
            boolean more = new KeyOrderWalk(staging, FilesystemStore::etagOf).walk(start, base, checked, continuation, maxKeys, entries);
            return new ListPage(entries, more ? Optional.of(entries.get(entries.size() - 1).key()) : Optional.empty());
        } catch (IOException | UncheckedIOException e) {
            throw new TransientStoreException("listing prefix '" + checked + "' failed: " + e, null, null, e);
        }
    }

    // ---- delete

    @Override
    public void delete(String key) throws StoreException {
        Path file = resolve(key);
        try {
            if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
                return; // a directory of other keys: no object under this key
            }
            synchronized (tree) {
                if (Files.deleteIfExists(file)) {
                    StoreFiles.fsyncDirectory(file.getParent());
                    pruneEmptyParents(file.getParent());
                }
            }
        } catch (NotDirectoryException e) {
            // a parent is an object: nothing under this key
        } catch (java.nio.file.AccessDeniedException e) {
            throw new AccessDeniedException("delete of key '" + key + "' denied by the file system", key, null, e);
        } catch (IOException e) {
            throw new TransientStoreException("delete of key '" + key + "' failed: " + e, key, null, e);
        }
    }

    private void pruneEmptyParents(Path dir) {
        for (Path p = dir; p != null && !p.equals(root) && p.startsWith(root); p = p.getParent()) {
            try {
                Files.delete(p);
            } catch (IOException e) {
                return; // not empty (or raced with a put): stop
            }
        }
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        List<String> failed = new ArrayList<>();
        StoreException first = null;
        for (String key : keys) {
            try {
                delete(key);
            } catch (StoreException e) {
                failed.add(key);
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            first.addSuppressed(new StoreRejectedException(failed.size() + " of " + keys.size()
                    + " keys could not be deleted, first: " + failed.subList(0, Math.min(5, failed.size())), null, null, null));
            throw first;
        }
    }

    // ---- keys

    private Path resolve(String key) throws InvalidKeyException {
        KeyRules.check(key);
        Path path = root.resolve(key).normalize();
        if (!path.startsWith(root) || path.equals(root)) {
            throw new InvalidKeyException("key '" + key + "' resolves outside the store root " + root, key, null, null);
        }
        // An existing symbolic link on the way could lead outside the root.
        Path existing = path;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (existing != null) {
            try {
                if (!existing.toRealPath().startsWith(root)) {
                    throw new InvalidKeyException("key '" + key + "' resolves outside the store root " + root
                            + " through a symbolic link", key, null, null);
                }
            } catch (IOException e) {
                // vanished meanwhile: the operation itself reports what it finds
            }
        }
        return path;
    }

    private static void removeStaleTemps(Path staging) throws IOException {
        Instant cutoff = Instant.now().minus(STALE_TEMP_AGE);
        try (Stream<Path> temps = Files.list(staging)) {
            for (Path temp : (Iterable<Path>) temps::iterator) {
                try {
                    if (Files.getLastModifiedTime(temp).toInstant().isBefore(cutoff)) {
                        Files.deleteIfExists(temp);
                    }
                } catch (IOException ignored) {
                    // another process may be cleaning up too
                }
            }
        }
    }

}
