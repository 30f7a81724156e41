package dev.felix.offload.store.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.InvalidKeyException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.UploadBody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What only the filesystem store has: paths, links, staging and directory bookkeeping. */
class FilesystemStoreTest {
    @TempDir
    Path dir;

    @Test
    void aSymbolicLinkCannotLeadAKeyOutOfTheRoot() throws Exception {
        Path root = dir.resolve("root");
        Path outside = Files.createDirectories(dir.resolve("outside"));
        FilesystemStore store = FilesystemStore.open(root);
        Files.createSymbolicLink(root.resolve("link"), outside);
        assertThatThrownBy(() -> store.put("link/escaped", UploadBody.ofBytes(new byte[] {1})))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("link/escaped").hasMessageContaining("outside the store root");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void putsLeaveNoTemporaryFilesAndStagingIsNeverListed() throws Exception {
        FilesystemStore store = FilesystemStore.open(dir);
        store.put("a/b/c", UploadBody.ofBytes(new byte[] {1, 2}));
        store.put("a/b/c", UploadBody.ofBytes(new byte[] {3}));
        try (Stream<Path> staged = Files.list(dir.resolve(FilesystemStore.STAGING))) {
            assertThat(staged).isEmpty();
        }
        assertThat(store.list("").toList()).extracting(ObjectSummary::key).containsExactly("a/b/c");
    }

    @Test
    void keysCollidingWithDirectoriesAreRefusedAndDeletesPruneEmptyDirectories() throws Exception {
        FilesystemStore store = FilesystemStore.open(dir);
        store.put("a/b", UploadBody.ofBytes(new byte[] {1}));
        assertThatThrownBy(() -> store.put("a", UploadBody.ofBytes(new byte[] {2}))).isInstanceOf(StoreRejectedException.class)
                .hasMessageContaining("'a'");
        assertThatThrownBy(() -> store.put("a/b/c", UploadBody.ofBytes(new byte[] {2}))).isInstanceOf(StoreRejectedException.class);
        assertThatThrownBy(() -> store.head("a")).isInstanceOf(ObjectNotFoundException.class);
        store.delete("a");
        store.delete("a/b");
        assertThat(dir.resolve("a")).doesNotExist();
        store.put("a", UploadBody.ofBytes(new byte[] {2}));
        assertThat(store.readAll("a", 10, OptionalLong.empty())).containsExactly(2);
    }

    /**
     * Puts and deletes of keys under one directory from two threads at once: a delete that prunes
     * the directory it emptied must not take it from under the other thread's put, nor fail syncing
     * a directory the other thread's delete pruned.
     */
    @Test
    void concurrentPutsAndDeletesUnderOneDirectoryNeverFail() throws Exception {
        FilesystemStore store = FilesystemStore.open(dir);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            String key = "node/shard/" + t;
            threads[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < 400 && failure.get() == null; i++) {
                        store.put(key, UploadBody.ofBytes(new byte[] {(byte) i}));
                        store.delete(key);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failure.get()).as("a put or delete failed").isNull();
        assertThat(dir.resolve("node")).doesNotExist();
    }

    /**
     * Listing in pages walks directories in key order (a directory's keys sort as its name and '/',
     * after "a-1" and "a.x", before "a0"): every page, every prefix, every page size gives exactly the
     * keys a sort of all of them gives.
     */
    @Test
    void pagesFollowKeyOrderAcrossDirectoriesForEveryPrefixAndPageSize() throws Exception {
        String[] parts = {"a", "a-1", "a.x", "a0", "ab", "b", "\u00e9", "z"};
        for (long seed = 0; seed < 25; seed++) {
            java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
            Path storeDir = Files.createDirectories(dir.resolve("s" + seed));
            FilesystemStore store = FilesystemStore.open(storeDir);
            java.util.TreeSet<String> keys = new java.util.TreeSet<>(dev.felix.offload.store.KeyRules.UTF8_ORDER);
            for (int i = 0; i < 40; i++) {
                StringBuilder key = new StringBuilder();
                int depth = 1 + random.nextInt(3);
                for (int d = 0; d < depth; d++) {
                    key.append(d == 0 ? "" : "/").append(parts[random.nextInt(parts.length)]);
                }
                try {
                    store.put(key.toString(), UploadBody.ofBytes(new byte[] {(byte) i}));
                    keys.add(key.toString());
                } catch (StoreRejectedException collision) {
                    // a key that is another key's directory: the store refuses it, and so does this test
                }
            }
            List<String> prefixes = new java.util.ArrayList<>(List.of("", "a", "a/", "a-", "a.", "b/a", "z/z/"));
            for (String k : keys) {
                prefixes.add(k.substring(0, random.nextInt(k.length() + 1)));
            }
            for (String prefix : prefixes) {
                List<String> expected = keys.stream().filter(k -> k.startsWith(prefix)).toList();
                for (int size : new int[] {1, 2, 3, 7, 1000}) {
                    List<String> listed = new java.util.ArrayList<>();
                    String continuation = null;
                    for (int page = 0; page <= keys.size() + 1; page++) {
                        dev.felix.offload.store.ListPage p = store.listPage(prefix, continuation, size);
                        p.entries().forEach(e -> listed.add(e.key()));
                        if (p.continuation().isEmpty()) {
                            break;
                        }
                        continuation = p.continuation().get();
                    }
                    assertThat(listed).as("seed %d, prefix '%s', pages of %d", seed, prefix, size)
                            .containsExactlyElementsOf(expected);
                }
            }
        }
    }

    @Test
    void openingRemovesStaleStagingFilesOnly() throws Exception {
        FilesystemStore.open(dir);
        Path stale = Files.writeString(dir.resolve(FilesystemStore.STAGING).resolve("put-1.tmp"), "crashed");
        Files.setLastModifiedTime(stale, FileTime.from(Instant.now().minus(2, ChronoUnit.DAYS)));
        Path fresh = Files.writeString(dir.resolve(FilesystemStore.STAGING).resolve("put-2.tmp"), "in flight");
        FilesystemStore.open(dir);
        assertThat(stale).doesNotExist();
        assertThat(fresh).exists();
    }

    @Test
    void aRootThatIsAFileIsRefusedByName() throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertThatThrownBy(() -> FilesystemStore.open(file)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString());
    }

    /** A reader racing an overwriting writer sees one whole body or the other, never a mix or a part. */
    @Test
    void readersNeverSeeHalfAnObject() throws Exception {
        FilesystemStore store = FilesystemStore.open(dir);
        byte[] small = new byte[100_000];
        byte[] large = new byte[300_000];
        Arrays.fill(small, (byte) 'a');
        Arrays.fill(large, (byte) 'b');
        store.put("race", UploadBody.ofBytes(small));
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < 200; i++) {
                    store.put("race", UploadBody.ofBytes(i % 2 == 0 ? large : small));
                }
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                done.set(true);
            }
        });
        writer.start();
        int reads = 0;
        while (!done.get() || reads < 10) {
            byte[] seen = store.readAll("race", 1_000_000, OptionalLong.empty());
            assertThat(Arrays.equals(seen, small) || Arrays.equals(seen, large)).as("read %d", reads).isTrue();
            reads++;
        }
        writer.join();
        assertThat(failure.get()).isNull();
    }
}
