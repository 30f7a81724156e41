package dev.felix.offload.store.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.felix.offload.store.BodyDigests;
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
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract every {@link ObjectStore} passes. A backend's test extends this class, opens the
 * store (against a fresh, empty location) in {@link #openStore()}, and says which capabilities
 * its server should report in {@link #expectedCapabilities()}; tests of an optional capability run
 * where the store declares it and check the refusal where it does not.
 *
 * <p>Shipped in the module's test-jar, so stores elsewhere can be held to the same contract.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ObjectStoreContract {
    protected ObjectStore store;

    @TempDir
    protected Path scratch;

    /** Opens the store under test on an empty location. Called once per test class. */
    protected abstract ObjectStore openStore() throws Exception;

    /**
     * What the store should report from {@link ObjectStore#capabilities()} against this server, or
     * null where that is not known in advance (a server this build cannot run itself); the
     * capability-dependent tests still follow what the store reports.
     */
    protected abstract Set<StoreCapability> expectedCapabilities();

    /** The multipart part size the store was configured with, so a range can straddle a part boundary. */
    protected long partSize() {
        return 8L * 1024 * 1024;
    }

    /** How many parts the store should cut the 64 MiB object into (1: a single request). */
    protected int expectedPartsOfBigObject() {
        return 1;
    }

    /**
     * Whether head should report the 64 MiB object's CRC32 (kept by the store, or proven from a
     * server's composite of part CRC32s); null where that is not known in advance. A CRC32 head does
     * report must be the right one either way.
     */
    protected Boolean storesCrc32OfBigObject() {
        return null;
    }

    @BeforeAll
    void openTheStore() throws Exception {
        store = openStore();
    }

    @AfterAll
    void closeTheStore() {
        if (store != null) {
            store.close();
        }
    }

    protected boolean has(StoreCapability capability) throws StoreException {
        return store.capabilities().contains(capability);
    }

    @Test
    void reportsTheExpectedCapabilities() throws Exception {
        assertThat(store.describe()).isNotBlank();
        assumeThat(expectedCapabilities()).as("capabilities known in advance").isNotNull();
        assertThat(store.capabilities()).containsExactlyInAnyOrderElementsOf(expectedCapabilities());
        assertThat(store.describe()).isNotBlank();
    }

    @Test
    void zeroByteObjectRoundTrips() throws Exception {
        PutResult put = store.put("zero/empty", UploadBody.ofBytes(new byte[0]));
        assertThat(put.size()).isZero();
        ObjectHead head = store.head("zero/empty");
        assertThat(head.size()).isZero();
        assertThat(store.readAll("zero/empty", 10, OptionalLong.of(0))).isEmpty();
        Path target = scratch.resolve("zero.bin");
        DownloadResult download = store.download("zero/empty", target, OptionalLong.of(0));
        assertThat(download.size()).isZero();
        assertThat(Files.size(target)).isZero();
        assertThatThrownBy(() -> store.readRange("zero/empty", ByteRange.of(0, 1))).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void smallObjectRoundTrips() throws Exception {
        byte[] body = "hello, object store".getBytes(StandardCharsets.UTF_8);
        PutResult put = store.put("small/hello.txt", UploadBody.ofBytes(body));
        assertThat(put.etag()).isNotBlank();
        assertThat(put.parts()).isEqualTo(1);
        ObjectHead head = store.head("small/hello.txt");
        assertThat(head.key()).isEqualTo("small/hello.txt");
        assertThat(head.size()).isEqualTo(body.length);
        assertThat(head.etag()).isEqualTo(put.etag());
        if (has(StoreCapability.CRC32_STORED)) {
            assertThat(head.crc32()).hasValue(ContractData.crc32(body));
        }
        assertThat(store.readAll("small/hello.txt", 1024, OptionalLong.empty())).isEqualTo(body);
        assertThat(store.readAll("small/hello.txt", 1024, OptionalLong.of(ContractData.crc32(body)))).isEqualTo(body);
        assertThat(store.readRange("small/hello.txt", ByteRange.of(7, 6))).isEqualTo("object".getBytes(StandardCharsets.UTF_8));
        Path target = scratch.resolve("hello.txt");
        DownloadResult download = store.download("small/hello.txt", target, OptionalLong.of(ContractData.crc32(body)));
        assertThat(download.size()).isEqualTo(body.length);
        assertThat(download.crc32()).isEqualTo(ContractData.crc32(body));
        assertThat(Files.readAllBytes(target)).isEqualTo(body);
    }

    @Test
    void largeObjectRoundTripsAndReadsRanges() throws Exception {
        Path big = ContractData.bigFile();
        long crc = ContractData.bigCrc32();
        PutResult put = store.put("big/64mib.bin", UploadBody.ofFile(big), PutOptions.defaults().withCrc32(crc));
        assertThat(put.size()).isEqualTo(ContractData.BIG_SIZE);
        assertThat(put.parts()).isEqualTo(expectedPartsOfBigObject());
        ObjectHead head = store.head("big/64mib.bin");
        assertThat(head.size()).isEqualTo(ContractData.BIG_SIZE);
        if (head.crc32().isPresent() || Boolean.TRUE.equals(storesCrc32OfBigObject())) {
            assertThat(head.crc32()).hasValue(crc);
        }
        if (Boolean.FALSE.equals(storesCrc32OfBigObject())) {
            assertThat(head.crc32()).isEmpty();
        }
        assertThat(head.userMetadata()).isEmpty();
        Path target = scratch.resolve("big.bin");
        DownloadResult download = store.download("big/64mib.bin", target, OptionalLong.of(crc));
        assertThat(download.size()).isEqualTo(ContractData.BIG_SIZE);
        assertThat(download.crc32()).isEqualTo(crc);
        assertThat(Files.mismatch(big, target)).isEqualTo(-1L);
        Files.delete(target);

        long last = ContractData.BIG_SIZE - 1;
        assertThat(store.readRange("big/64mib.bin", ByteRange.of(0, 1))).isEqualTo(slice(big, 0, 1));
        assertThat(store.readRange("big/64mib.bin", ByteRange.of(last, 1))).isEqualTo(slice(big, last, 1));
        long boundary = partSize();
        assertThat(store.readRange("big/64mib.bin", ByteRange.of(boundary - 3, 7))).isEqualTo(slice(big, boundary - 3, 7));
        assertThat(store.readRange("big/64mib.bin", ByteRange.of(boundary * 3 - 1000, 300_000)))
                .isEqualTo(slice(big, boundary * 3 - 1000, 300_000));
        assertThatThrownBy(() -> store.readAll("big/64mib.bin", 1024 * 1024, OptionalLong.empty()))
                .isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void fileRangeUploadStoresExactlyThatRange() throws Exception {
        Path file = scratch.resolve("source.bin");
        byte[] all = ContractData.bytes(10_000, 7);
        Files.write(file, all);
        store.put("range/part.bin", UploadBody.ofFileRange(file, 1234, 5000));
        byte[] back = store.readAll("range/part.bin", 10_000, OptionalLong.empty());
        assertThat(back).isEqualTo(java.util.Arrays.copyOfRange(all, 1234, 6234));
    }

    @Test
    void missingKeysAreTypedNotFound() {
        assertThatThrownBy(() -> store.head("missing/nothing")).isInstanceOf(ObjectNotFoundException.class)
                .satisfies(e -> assertThat(((StoreException) e).key()).hasValue("missing/nothing"));
        assertThatThrownBy(() -> store.readRange("missing/nothing", ByteRange.of(0, 1))).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.readAll("missing/nothing", 10, OptionalLong.empty())).isInstanceOf(ObjectNotFoundException.class);
        Path target = scratch.resolve("never.bin");
        assertThatThrownBy(() -> store.download("missing/nothing", target, OptionalLong.empty()))
                .isInstanceOf(ObjectNotFoundException.class);
        assertThat(target).doesNotExist();
    }

    @Test
    void rangesOutsideTheObjectAreInvalidRange() throws Exception {
        store.put("ranges/ten", UploadBody.ofBytes(ContractData.bytes(10, 3)));
        assertThatThrownBy(() -> store.readRange("ranges/ten", ByteRange.of(10, 1))).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> store.readRange("ranges/ten", ByteRange.of(1_000_000, 5))).isInstanceOf(InvalidRangeException.class);
        assertThatThrownBy(() -> store.readRange("ranges/ten", ByteRange.of(5, 6))).isInstanceOf(InvalidRangeException.class);
        assertThat(store.readRange("ranges/ten", ByteRange.of(5, 5))).hasSize(5);
    }

    @Test
    void listsByPrefixAndPaginatesPast1000Keys() throws Exception {
        int count = 1003;
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(String.format("many/k%05d", i));
        }
        putAll(keys);
        store.put("manyx/outside", UploadBody.ofBytes(new byte[1]));
        store.put("many-outside", UploadBody.ofBytes(new byte[1]));

        ObjectListing listing = store.list("many/");
        List<String> listed = new ArrayList<>();
        while (listing.hasNext()) {
            ObjectSummary s = listing.next();
            assertThat(s.size()).isEqualTo(1);
            listed.add(s.key());
        }
        assertThat(listed).containsExactlyElementsOf(keys);
        assertThat(listing.pagesFetched()).isEqualTo(2);

        ListPage first = store.listPage("many/", null, 10);
        assertThat(first.entries()).extracting(ObjectSummary::key).containsExactlyElementsOf(keys.subList(0, 10));
        assertThat(first.continuation()).isPresent();
        ListPage second = store.listPage("many/", first.continuation().get(), 10);
        assertThat(second.entries()).extracting(ObjectSummary::key).containsExactlyElementsOf(keys.subList(10, 20));

        store.deleteAll(keys);
        assertThat(store.list("many/").toList()).isEmpty();
        assertThat(store.list("many").toList()).extracting(ObjectSummary::key).containsExactly("many-outside", "manyx/outside");
    }

    @Test
    void deleteIsIdempotent() throws Exception {
        store.delete("delete/never-existed");
        store.put("delete/once", UploadBody.ofBytes(new byte[] {1, 2, 3}));
        store.delete("delete/once");
        store.delete("delete/once");
        assertThatThrownBy(() -> store.head("delete/once")).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void batchDeleteRemovesEveryKeyAndIgnoresMissingOnes() throws Exception {
        List<String> keys = List.of("batch/a", "batch/b", "batch/c/d", "batch/e");
        putAll(keys);
        store.put("batch-keep", UploadBody.ofBytes(new byte[1]));
        List<String> withMissing = new ArrayList<>(keys);
        withMissing.add("batch/missing");
        store.deleteAll(withMissing);
        for (String key : keys) {
            assertThatThrownBy(() -> store.head(key)).isInstanceOf(ObjectNotFoundException.class);
        }
        assertThat(store.head("batch-keep").size()).isEqualTo(1);
        store.deleteAll(List.of());
    }

    @Test
    void overwriteReplacesTheObject() throws Exception {
        PutResult first = store.put("overwrite/x", UploadBody.ofBytes("first version".getBytes(StandardCharsets.UTF_8)));
        PutResult second = store.put("overwrite/x", UploadBody.ofBytes("second, longer version".getBytes(StandardCharsets.UTF_8)));
        assertThat(new String(store.readAll("overwrite/x", 100, OptionalLong.empty()), StandardCharsets.UTF_8))
                .isEqualTo("second, longer version");
        assertThat(store.head("overwrite/x").size()).isEqualTo(22);
        assertThat(second.etag()).isNotEqualTo(first.etag());
    }

    @Test
    void keysWithSpacesAndNonAsciiCharactersWork() throws Exception {
        List<String> keys = List.of("odd/with space/file name.txt", "odd/ünïcödé/日本語/ключ", "odd/emoji-😀",
                "odd/plus+equals=and&amp", "odd/percent%20literal", "odd/quote'\"?#[]");
        for (String key : keys) {
            byte[] body = key.getBytes(StandardCharsets.UTF_8);
            store.put(key, UploadBody.ofBytes(body));
            assertThat(store.readAll(key, 1000, OptionalLong.empty())).as(key).isEqualTo(body);
            assertThat(store.head(key).size()).as(key).isEqualTo(body.length);
        }
        List<String> sorted = new ArrayList<>(keys);
        sorted.sort(KeyRules.UTF8_ORDER);
        assertThat(store.list("odd/").toList()).extracting(ObjectSummary::key).containsExactlyElementsOf(sorted);
        assertThat(store.list("odd/ünïcödé/").toList()).extracting(ObjectSummary::key).containsExactly("odd/ünïcödé/日本語/ключ");
        store.deleteAll(keys);
        assertThat(store.list("odd/").toList()).isEmpty();
    }

    @Test
    void createOnlyPutRefusesAnExistingKey() throws Exception {
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        PutOptions createOnly = PutOptions.defaults().withCreateOnly(true);
        if (!has(StoreCapability.CREATE_ONLY_PUT)) {
            assertThatThrownBy(() -> store.put("create-only/k", UploadBody.ofBytes(first), createOnly))
                    .isInstanceOf(CapabilityMissingException.class);
            assertThatThrownBy(() -> store.head("create-only/k")).isInstanceOf(ObjectNotFoundException.class);
            return;
        }
        store.put("create-only/k", UploadBody.ofBytes(first), createOnly);
        assertThatThrownBy(() -> store.put("create-only/k", UploadBody.ofBytes("second".getBytes(StandardCharsets.UTF_8)), createOnly))
                .isInstanceOf(PreconditionFailedException.class);
        assertThat(store.readAll("create-only/k", 100, OptionalLong.empty())).isEqualTo(first);
    }

    @Test
    void noReplacePutNeverReplacesAnExistingObjectOnAnyStore() throws Exception {
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        PutOptions noReplace = PutOptions.defaults().withNoReplace();
        store.put("no-replace/k", UploadBody.ofBytes(first), noReplace);
        assertThatThrownBy(() -> store.put("no-replace/k", UploadBody.ofBytes("second!".getBytes(StandardCharsets.UTF_8)),
                noReplace)).isInstanceOf(PreconditionFailedException.class);
        assertThat(store.readAll("no-replace/k", 100, OptionalLong.empty())).isEqualTo(first);
        // the same bytes again are refused too: telling a retry from a collision is the caller's part
        assertThatThrownBy(() -> store.put("no-replace/k", UploadBody.ofBytes(first), noReplace))
                .isInstanceOf(PreconditionFailedException.class);
    }

    @Test
    void aPutListedAbsentSkipsOnlyTheHeadAndOnlyForOneRequest() throws Exception {
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        byte[] second = "second!".getBytes(StandardCharsets.UTF_8);
        store.put("listed-absent/k", UploadBody.ofBytes(first), PutOptions.defaults().withNoReplace());
        // A caller whose listing was wrong: what happens shows whether a head was made.
        PutOptions listed = PutOptions.defaults().withNoReplaceListedAbsent();
        assertThat(listed.createOnly()).isTrue();
        if (has(StoreCapability.CREATE_ONLY_PUT)) {
            // the store's own create-only refusal never depended on a head
            assertThatThrownBy(() -> store.put("listed-absent/k", UploadBody.ofBytes(second), listed))
                    .isInstanceOf(PreconditionFailedException.class);
            assertThat(store.readAll("listed-absent/k", 100, OptionalLong.empty())).isEqualTo(first);
        } else {
            store.put("listed-absent/k", UploadBody.ofBytes(second), listed);
            assertThat(store.readAll("listed-absent/k", 100, OptionalLong.empty()))
                    .as("no head was made: the caller's listing stood for it").isEqualTo(second);
        }
        // a body in parts is headed whatever the caller listed
        Path big = scratch.resolve("listed-absent-big");
        Files.write(big, ContractData.bytes(17 * 1024 * 1024, 7)); // above the test servers' 16 MiB threshold
        assertThatThrownBy(() -> store.put("listed-absent/k", UploadBody.ofFile(big), listed))
                .isInstanceOf(PreconditionFailedException.class);
        assertThat(store.head("listed-absent/k").size()).isLessThan(100);
        assertThat(listed.withCreateOnly(false).listedAbsent()).as("a put that may replace has nothing to skip").isFalse();
    }

    @Test
    void aServerSideCopyHoldsTheSourcesBytesAndNeverReplacesAnObject() throws Exception {
        ObjectCopier copier = store.copier().orElseThrow(() -> new AssertionError("every store here copies inside itself"));
        byte[] body = ContractData.bytes(300_000, 21);
        store.put("copy/source", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(ContractData.crc32(body)));
        PutResult r = copier.copy("copy/source", "copy/target");
        assertThat(r.size()).isEqualTo(body.length);
        assertThat(store.readAll("copy/target", body.length, OptionalLong.of(ContractData.crc32(body)))).isEqualTo(body);
        ObjectHead head = store.head("copy/target");
        assertThat(head.size()).isEqualTo(body.length);
        head.crc32().ifPresent(c -> assertThat(c).as("a CRC32 the store reports is the bytes'")
                .isEqualTo(ContractData.crc32(body)));
        byte[] other = "other".getBytes(StandardCharsets.UTF_8);
        store.put("copy/taken", UploadBody.ofBytes(other));
        assertThatThrownBy(() -> copier.copy("copy/source", "copy/taken")).isInstanceOf(PreconditionFailedException.class);
        assertThat(store.readAll("copy/taken", 100, OptionalLong.empty())).isEqualTo(other);
        assertThatThrownBy(() -> copier.copy("copy/none", "copy/target2")).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.head("copy/target2")).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void noReplaceMultipartPutNeverReplacesAnExistingObject() throws Exception {
        byte[] small = ContractData.bytes(1000, 5);
        store.put("no-replace/big", UploadBody.ofBytes(small));
        Path big = scratch.resolve("no-replace-big");
        Files.write(big, ContractData.bytes(17 * 1024 * 1024, 6)); // above the test servers' 16 MiB threshold
        assertThatThrownBy(() -> store.put("no-replace/big", UploadBody.ofFile(big), PutOptions.defaults().withNoReplace()))
                .isInstanceOf(PreconditionFailedException.class);
        assertThat(store.readAll("no-replace/big", 2000, OptionalLong.empty())).isEqualTo(small);
    }

    @Test
    void wrongCrc32IsRejectedWhereTheStoreVerifies() throws Exception {
        byte[] body = ContractData.bytes(4096, 11);
        long good = ContractData.crc32(body);
        store.put("crc/good", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(good));
        assertThat(store.readAll("crc/good", 8192, OptionalLong.of(good))).isEqualTo(body);
        assumeThat(has(StoreCapability.CRC32_VERIFIED_ON_PUT)).as("store verifies CRC32 on put").isTrue();
        assertThatThrownBy(() -> store.put("crc/bad", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(good ^ 1)))
                .isInstanceOf(IntegrityRejectedException.class);
        assertThatThrownBy(() -> store.head("crc/bad")).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.put("crc/good", UploadBody.ofBytes(new byte[] {9}), PutOptions.defaults().withCrc32(good)))
                .isInstanceOf(IntegrityRejectedException.class);
        assertThat(store.readAll("crc/good", 8192, OptionalLong.empty())).isEqualTo(body);
    }

    /** The MD5 of {@code bytes}, computed apart from the store under test. */
    private static byte[] md5(byte[] bytes) {
        return BodyDigests.md5().digest(bytes);
    }

    @Test
    void contentMd5AndEtagProveTheCopyWhereTheServerChecksAndAnswersMd5s() throws Exception {
        byte[] body = ContractData.bytes(100_000, 21);
        PutResult small = store.put("md5/small", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(
                ContractData.crc32(body)));
        // a server that checks the CRC32 it is sent needs no MD5: its acceptance proves the copy
        boolean byCrc32 = has(StoreCapability.CRC32_VERIFIED_ON_PUT) && has(StoreCapability.CRC32_KEPT_BY_SERVER);
        boolean proves = !byCrc32 && has(StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT) && has(StoreCapability.MD5_ETAG);
        assertThat(small.contentMd5Proven()).isEqualTo(proves);
        assertThat(small.crc32Proven()).isEqualTo(byCrc32);
        if (has(StoreCapability.MD5_ETAG)) {
            assertThat(small.etag()).isEqualToIgnoringCase(HexFormat.of().formatHex(md5(body)));
            assertThat(store.head("md5/small").etag()).isEqualToIgnoringCase(small.etag());
        }

        Path big = scratch.resolve("md5-big");
        byte[] bytes = ContractData.bytes(17 * 1024 * 1024, 22); // above the test servers' 16 MiB threshold
        Files.write(big, bytes);
        PutResult parted = store.put("md5/big", UploadBody.ofFile(big), PutOptions.defaults().withCrc32(
                ContractData.crc32(bytes)));
        assertThat(parted.contentMd5Proven()).isEqualTo(proves);
        assertThat(parted.crc32Proven()).isEqualTo(byCrc32);
        if (proves && parted.parts() > 1) {
            MessageDigest ofParts = BodyDigests.md5();
            for (long at = 0; at < bytes.length; at += partSize()) {
                int n = (int) Math.min(partSize(), bytes.length - at);
                ofParts.update(md5(java.util.Arrays.copyOfRange(bytes, (int) at, (int) at + n)));
            }
            assertThat(parted.etag()).isEqualToIgnoringCase(HexFormat.of().formatHex(ofParts.digest()) + "-"
                    + parted.parts());
        }
        assertThat(store.readAll("md5/big", bytes.length, OptionalLong.of(ContractData.crc32(bytes)))).isEqualTo(bytes);
    }

    /** Digests taken of other bytes than those sent (a file changed after its caller read it). */
    @Test
    void bytesThatDifferFromTheirDigestsAreRefusedWhereTheServerChecksContentMd5() throws Exception {
        byte[] meant = ContractData.bytes(50_000, 31);
        byte[] sent = meant.clone();
        sent[12_345] ^= 0x40;
        BodyDigests stale = UploadBody.ofBytes(meant).digests(meant.length);
        Path bigMeant = scratch.resolve("stale-meant");
        Path bigSent = scratch.resolve("stale-sent");
        byte[] big = ContractData.bytes(17 * 1024 * 1024, 32);
        Files.write(bigMeant, big);
        big[9 * 1024 * 1024 + 7] ^= 0x01; // in the second part
        Files.write(bigSent, big);
        BodyDigests staleParts = UploadBody.ofFile(bigMeant).digests(partSize());
        if (!has(StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT)) {
            PutResult put = store.put("stale/small", UploadBody.ofBytes(sent).withDigests(stale));
            assertThat(put.contentMd5Proven()).isFalse();
            assertThat(store.readAll("stale/small", 60_000, OptionalLong.empty())).isEqualTo(sent);
            return;
        }
        assertThatThrownBy(() -> store.put("stale/small", UploadBody.ofBytes(sent).withDigests(stale)))
                .isInstanceOf(IntegrityRejectedException.class);
        assertThatThrownBy(() -> store.head("stale/small")).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.put("stale/big", UploadBody.ofFile(bigSent).withDigests(staleParts)))
                .isInstanceOf(IntegrityRejectedException.class);
        assertThatThrownBy(() -> store.head("stale/big")).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void userMetadataComesBackFromHead() throws Exception {
        PutOptions options = PutOptions.defaults().withUserMetadata(Map.of("Origin", "contract", "segment-base", "42"));
        if (!has(StoreCapability.USER_METADATA)) {
            assertThatThrownBy(() -> store.put("meta/k", UploadBody.ofBytes(new byte[1]), options))
                    .isInstanceOf(CapabilityMissingException.class);
            return;
        }
        store.put("meta/k", UploadBody.ofBytes(new byte[1]), options);
        assertThat(store.head("meta/k").userMetadata()).containsEntry("origin", "contract").containsEntry("segment-base", "42");
        assertThatThrownBy(() -> PutOptions.defaults().withUserMetadata(Map.of("Felix-Anything", "x")))
                .as("names the stores keep for themselves").isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void downloadWithTheWrongExpectedCrcLeavesTheTargetUntouched() throws Exception {
        byte[] body = ContractData.bytes(2048, 5);
        store.put("verify/k", UploadBody.ofBytes(body));
        Path target = scratch.resolve("verify.bin");
        Files.writeString(target, "previous content");
        assertThatThrownBy(() -> store.download("verify/k", target, OptionalLong.of(ContractData.crc32(body) ^ 0xff)))
                .isInstanceOf(ChecksumMismatchException.class);
        assertThat(Files.readString(target)).isEqualTo("previous content");
        assertThatThrownBy(() -> store.readAll("verify/k", 4096, OptionalLong.of(ContractData.crc32(body) ^ 0xff)))
                .isInstanceOf(ChecksumMismatchException.class);
        try (var files = Files.list(scratch)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("verify.bin");
        }
    }

    @Test
    void invalidKeysAreRefusedBeforeAnyRequest() {
        List<String> bad = List.of("", "/absolute", "../escape", "a/../../b", "a/./b", "./a", "a//b", "a/", "back\\slash",
                "nul\u0000byte", "line\nbreak", ".felix-staging/x", "x".repeat(1025));
        for (String key : bad) {
            assertThatThrownBy(() -> store.put(key, UploadBody.ofBytes(new byte[1]))).as(key).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> store.head(key)).as(key).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> store.delete(key)).as(key).isInstanceOf(InvalidKeyException.class);
        }
        assertThatThrownBy(() -> store.head("../escape")).hasMessageContaining("../escape");
    }

    private void putAll(List<String> keys) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<PutResult>> futures = new ArrayList<>();
            for (String key : keys) {
                futures.add(pool.submit(() -> store.put(key, UploadBody.ofBytes(new byte[] {42}))));
            }
            for (Future<PutResult> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    protected static byte[] slice(Path file, long offset, int length) throws IOException {
        byte[] out = new byte[length];
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            raf.seek(offset);
            raf.readFully(out);
        }
        return out;
    }
}
