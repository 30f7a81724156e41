package dev.felix.offload.copy;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.pass.TestRoots;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one rule for unlinking a local segment: an entry stands the settle time, then the manifest is
 * read again, before the segment goes; a broker's rewrite that erased the entry meanwhile keeps it.
 */
class LocalReleaseTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path shard;
    private FilesystemStore store;
    private List<ManifestEntry> entries;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 400, 17);
        shard = written.keySet().iterator().next();
        PassReport report = new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults(), StepHook.none(),
                Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isTrue();
        entries = ManifestStore.read(shard).entries();
        assertThat(entries).hasSizeGreaterThanOrEqualTo(2);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private SegmentFile segmentOf(ManifestEntry e) {
        return SegmentFile.in(shard, e.segmentId());
    }

    private LocalRelease rule(Instant now) throws Exception {
        Clock clock = Clock.fixed(now, ZoneOffset.UTC);
        return new LocalRelease(shard.getFileName().toString(), store, CopyProofs.read(shard, clock),
                true, LocalRelease.DEFAULT_SETTLE, clock);
    }

    @Test
    void anEntryStandsTheSettleTimeSinceItsProofBeforeItsSegmentMayGo() throws Exception {
        ManifestEntry oldest = entries.get(0);
        Instant since = Instant.ofEpochMilli(CopyProofs.read(shard).since(oldest).orElseThrow());
        Manifest manifest = ManifestStore.read(shard);

        LocalRelease.Decision early = rule(since.plusSeconds(4)).decide(segmentOf(oldest), oldest, manifest,
                OptionalLong.empty());
        assertThat(early).isInstanceOfSatisfying(LocalRelease.Decision.Keep.class, k -> {
            assertThat(k.reason()).isEqualTo(LocalRelease.KeptReason.SETTLING);
            assertThat(k.until()).isEqualTo(since.plus(LocalRelease.DEFAULT_SETTLE));
        });
        LocalRelease.Decision settled = rule(since.plus(LocalRelease.DEFAULT_SETTLE)).decide(segmentOf(oldest), oldest,
                manifest, OptionalLong.empty());
        assertThat(settled).isInstanceOf(LocalRelease.Decision.Release.class);
        assertThat(LocalRelease.release(segmentOf(oldest), ManifestStore.open(shard))).isTrue();
        assertThat(segmentOf(oldest).log()).doesNotExist();
    }

    /**
     * The broker's rewrite (read before the entry was saved, rename after) erases the entry: the release
     * reads the manifest again and keeps the segment, which still holds the records.
     */
    @Test
    void aRewriteThatErasedTheEntryIsSeenBeforeTheUnlink() throws Exception {
        ManifestEntry oldest = entries.get(0);
        ManifestStore ours = ManifestStore.open(shard);
        LocalRelease.Decision d = rule(Instant.now().plus(Duration.ofMinutes(1))).decide(segmentOf(oldest), oldest,
                ours.manifest(), OptionalLong.empty());
        assertThat(d).isInstanceOf(LocalRelease.Decision.Release.class);
        // the broker renames its older manifest over ours: our entries gone
        Files.write(ManifestStore.fileIn(shard), dev.felix.offload.manifest.ManifestCodec.encode(Manifest.empty()));

        assertThatThrownBy(() -> LocalRelease.release(segmentOf(oldest), ours)).isInstanceOf(ManifestChangedException.class);
        assertThat(segmentOf(oldest).log()).exists();
        assertThat(rule(Instant.now().plus(Duration.ofMinutes(1))).decide(segmentOf(oldest),
                LocalRelease.entryFor(ManifestStore.read(shard), segmentOf(oldest), oldest.baseOffset()),
                ManifestStore.read(shard), OptionalLong.empty()))
                .isInstanceOfSatisfying(LocalRelease.Decision.Keep.class,
                        k -> assertThat(k.reason()).isEqualTo(LocalRelease.KeptReason.NO_ENTRY));
    }

    /** An entry proven only now (its proof lost) counts from now: proving a copy late never makes it older. */
    @Test
    void aCopyProvenNowSettlesFromNowAndAProofMadeAgainKeepsItsTime() throws Exception {
        ManifestEntry oldest = entries.get(0);
        Files.delete(shard.resolve(CopyProofs.FILE_NAME));
        Instant now = Instant.now().plus(Duration.ofHours(1));
        LocalRelease.Decision d = rule(now).decide(segmentOf(oldest), oldest, ManifestStore.read(shard),
                OptionalLong.empty());
        assertThat(d).isInstanceOfSatisfying(LocalRelease.Decision.Keep.class,
                k -> assertThat(k.reason()).isEqualTo(LocalRelease.KeptReason.SETTLING));
        assertThat(CopyProofs.read(shard).since(oldest)).hasValue(now.toEpochMilli());

        CopyProofs proofs = CopyProofs.read(shard, Clock.fixed(now.plusSeconds(3), ZoneOffset.UTC));
        proofs.prove(oldest, "read-back", ManifestStore.read(shard));
        assertThat(CopyProofs.read(shard).since(oldest)).as("proven again: the same time").hasValue(now.toEpochMilli());
        proofs.recorded(Map.of(oldest, "read-back"), ManifestStore.read(shard));
        assertThat(CopyProofs.read(shard).since(oldest)).as("recorded again: from then")
                .hasValue(now.plusSeconds(3).toEpochMilli());
    }

    /** A proofs file of the first version (no times) counts from its modification time. */
    @Test
    void aVersionOneProofsFileCountsFromItsModificationTime() throws Exception {
        ManifestEntry oldest = entries.get(0);
        CopyProofs.Proof p = new CopyProofs.Proof(oldest.segmentId(), oldest.baseOffset(), oldest.sizeBytes(),
                oldest.objectCrc32(), oldest.objectKey(), "read-back", 0);
        String body = "felix-offload copy proofs v1\n" + Long.toUnsignedString(p.segmentId()) + " "
                + Long.toUnsignedString(p.baseOffset()) + " " + p.sizeBytes() + " "
                + String.format("%08x", Integer.toUnsignedLong(p.crc32())) + " read-back " + p.key() + "\n";
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Path file = shard.resolve(CopyProofs.FILE_NAME);
        Files.writeString(file, body + "crc32 " + String.format("%08x", crc.getValue()) + "\n");
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(1_700_000_000_000L));

        assertThat(CopyProofs.read(shard).how(oldest)).isEqualTo("read-back");
        assertThat(CopyProofs.read(shard).since(oldest)).hasValue(1_700_000_000_000L);
    }
}
