package dev.felix.offload.restore;

import dev.felix.offload.restore.StoreCandidates.Candidate;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectLister;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Finding a shard's segment objects in both key forms, on the filesystem store. */
class StoreCandidatesTest {

    private static final String PREFIX = "node-a/s/";
    private static final String LEGACY = "s/";

    @TempDir
    Path tmp;

    private FilesystemStore store;
    private StoreCandidates candidates;

    @BeforeEach
    void setUp() throws Exception {
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        candidates = new StoreCandidates(store, store, PREFIX, LEGACY);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private void put(String key, int size) throws Exception {
        store.put(key, UploadBody.ofBytes(new byte[size]));
    }

    private static String name(long base, long id) {
        return String.format("%020d-%020d.segment", base, id);
    }

    @Test
    void segmentKeysUnderEitherPrefixAreCandidatesIndexesArePassedOverOthersIgnored() throws Exception {
        put(PREFIX + name(0, 1), 10);
        put(PREFIX + name(0, 1).replace(".segment", ".index"), 3);
        put(LEGACY + name(100, 2), 20);
        put(PREFIX + "notes.txt", 1);
        put(PREFIX + "deeper/" + name(5, 5), 1);
        put(PREFIX + "99999999999999999999-00000000000000000001.segment", 1); // above 2^64-1
        List<String> ignored = new ArrayList<>();
        Map<String, Candidate> found = candidates.listed(ignored);
        assertThat(found).containsOnlyKeys(PREFIX + name(0, 1), LEGACY + name(100, 2));
        assertThat(found.get(PREFIX + name(0, 1))).isEqualTo(new Candidate(PREFIX + name(0, 1), 0, 1, 10, false));
        assertThat(found.get(LEGACY + name(100, 2))).isEqualTo(new Candidate(LEGACY + name(100, 2), 100, 2, 20, true));
        assertThat(ignored).containsExactlyInAnyOrder(PREFIX + "notes.txt", PREFIX + "deeper/" + name(5, 5),
                PREFIX + "99999999999999999999-00000000000000000001.segment");
    }

    @Test
    void unnamedCandidatesComeByBaseThenSegmentId() {
        Candidate a = new Candidate("a", 200, 3, 1, false);
        Candidate b = new Candidate("b", 100, 9, 1, false);
        Candidate c = new Candidate("c", 100, 2, 1, true);
        Candidate named = new Candidate("named", 0, 1, 1, false);
        assertThat(StoreCandidates.unnamed(List.of(a, b, c, named), Set.of("named"))).containsExactly(c, b, a);
    }

    @Test
    void aGapsBaseIsListedUnderItsOwnPrefix() throws Exception {
        put(LEGACY + name(50, 7), 4);
        put(PREFIX + name(51, 8), 4);
        Map<String, Candidate> at = candidates.at(new EntryGaps.Gap(50, 1, 9));
        assertThat(at).containsOnlyKeys(LEGACY + name(50, 7));
    }

    @Test
    void aKeyNoListingShowsIsAskedForByTheIdsTheChainImplies() throws Exception {
        put(LEGACY + name(60, 4), 4);
        put(PREFIX + name(60, 5), 4);
        // a store whose listings lag behind its writes: they show nothing, its HEADs answer
        ObjectLister lagging = (prefix, continuation, maxKeys) -> new ListPage(List.of(), java.util.Optional.empty());
        StoreCandidates byKey = new StoreCandidates(lagging, store, PREFIX, LEGACY);
        Map<String, Candidate> at = byKey.at(new EntryGaps.Gap(60, 2, 7));
        assertThat(at.values()).as("the first id that answers, in both forms; no further ids asked")
                .containsExactly(new Candidate(LEGACY + name(60, 4), 60, 4, 4, true));
        assertThat(byKey.at(new EntryGaps.Gap(61, 2, 7))).isEmpty();
        assertThat(byKey.listed(new ArrayList<>())).isEmpty();
    }
}
