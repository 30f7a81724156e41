package dev.felix.offload.reliability.fuzz;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.side.Ballot;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.BatchLocation;
import dev.felix.offload.log.side.EpochHistory;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.KeyIndexEntry;
import dev.felix.offload.log.side.KeyIndexFile;
import dev.felix.offload.log.side.KeyIndexSnapshot;
import dev.felix.offload.log.side.OpenBatch;
import dev.felix.offload.log.side.ProducerEntry;
import dev.felix.offload.log.side.ProducerSnapshot;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.Registration;
import dev.felix.offload.log.side.RegistrationFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import dev.felix.offload.log.side.RunState;
import dev.felix.offload.log.side.RunStateFile;
import dev.felix.offload.log.side.StorageId;
import dev.felix.offload.log.side.StorageIdFile;
import dev.felix.offload.log.side.StreamMarker;
import dev.felix.offload.log.side.StreamMarkerFile;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * Writes the starting inputs of {@link DecodersFuzzTest}: valid encodings of each format (so the
 * fuzzer starts inside the format, not at random bytes), and for segments and indexes a few of
 * local-log's golden files. Run once by hand; its output is committed:
 * {@code java -cp <test class path> dev.felix.offload.reliability.fuzz.FuzzSeeds <inputs dir> <golden dir>}.
 */
public final class FuzzSeeds {

    private FuzzSeeds() {
    }

    public static void main(String[] args) throws Exception {
        Path inputs = Path.of(args[0]);
        Path golden = Path.of(args[1]);
        for (String name : List.of("v2-plain", "v3-plain", "v3-batches", "v4-generation-start", "torn-record-payload",
                "torn-batch-tag", "offset-gap")) {
            copy(golden.resolve("segments/" + name + ".log"), inputs.resolve("segmentScanner/golden-" + name));
        }
        for (String name : List.of("v3-many-records", "torn-final-entry", "header-only", "v3-base-offset-1000")) {
            copy(golden.resolve("indexes/" + name + ".index"), inputs.resolve("segmentIndex/golden-" + name));
        }

        // A small log with batches and rolls, written by ShardLog itself.
        Path tmp = Files.createTempDirectory("fuzz-seeds");
        Path shard = tmp.resolve("acme_fuzz_stream-0_0-0000000000000000");
        try (ShardLog log = ShardLog.open(shard, ShardLogConfig.defaults().withSegmentSizeBytes(600)
                .withIndexSpacingBytes(64).withFsyncPolicy(FsyncPolicy.none()))) {
            for (int i = 0; i < 12; i++) {
                if (i % 4 == 3) {
                    log.appendBatch(42, i, 1_000_000L + i, List.of(new byte[] {1, 2, 3}, new byte[] {4}, new byte[0]));
                } else {
                    log.append(1_000_000L + i, ("record " + i).getBytes());
                }
            }
        }
        List<SegmentFile> files = SegmentFile.list(shard);
        copy(files.get(0).log(), inputs.resolve("segmentScanner/shardlog-first"));
        copy(files.get(files.size() - 1).log(), inputs.resolve("segmentScanner/shardlog-active"));
        write(inputs.resolve("segmentIndex/rebuilt"), ShardLog.rebuildIndexOf(files.get(0), "fuzz",
                Files.size(files.get(0).log()), 64).encode());
        write(inputs.resolve("segmentIndex/empty"), SegmentIndex.of(7, new long[0], new long[0]).encode());

        Manifest m = Manifest.empty();
        for (int i = 0; i < 3; i++) {
            long base = 100L * i;
            m = m.withEntry(new ManifestEntry(i, base, base + 99, 4096 + i, 1_000 + i, 2_000 + i, 0x7fedcba9 - i,
                    "node-0011223344556677/acme_fuzz_stream-0_0-0000000000000000/"
                            + String.format("%020d-%020d.segment", base, i)));
        }
        write(inputs.resolve("manifest/three-entries"), ManifestCodec.encode(m));
        write(inputs.resolve("manifest/empty"), ManifestCodec.encode(Manifest.empty()));

        write(inputs.resolve("ballot/leader"), BallotFile.encode(new Ballot(7, "broker-3")));
        write(inputs.resolve("epochs/three"), EpochsFile.encode(EpochHistory.empty().append(1, 0).append(2, 50)
                .append(5, 51)));
        write(inputs.resolve("keyIndex/two-keys"), KeyIndexFile.encode(new KeyIndexSnapshot(100, 4000, 0x1234,
                List.of(KeyIndexEntry.ofCacheKey("beta".getBytes(), 99, 3, 1_767_225_600_000L, 12),
                        KeyIndexEntry.ofCacheKey("alpha".getBytes(), 10, 1, 0, 40)))));
        write(inputs.resolve("producers/open-batch"), ProducersFile.encode(new ProducerSnapshot(60,
                new OpenBatch(9, 4, 3, 58, 2), List.of(new ProducerEntry(9, 3, List.of(new BatchLocation(40, 2),
                        new BatchLocation(50, 5))), new ProducerEntry(11, 0, List.of(new BatchLocation(20, 1)))))));
        write(inputs.resolve("producers/none"), ProducersFile.encode(new ProducerSnapshot(0, null, List.of())));
        write(inputs.resolve("registration/one"), RegistrationFile.encode(new Registration(3)));
        write(inputs.resolve("replica/state"), ReplicaFile.encode(new ReplicaState(4, 1234)));
        StorageId id = new StorageId(0x0123456789abcdefL, 0xfedcba9876543210L);
        write(inputs.resolve("storageId/one"), StorageIdFile.encode(id));
        write(inputs.resolve("runState/running"), RunStateFile.encode(RunState.running(id, true)));
        write(inputs.resolve("runState/stopped"), RunStateFile.encode(RunState.running(id, false).stoppedCleanly()));
        write(inputs.resolve("streamMarker/held"), StreamMarkerFile.encode(new StreamMarker("acme", "default", "orders",
                OptionalLong.of(3), false, OptionalLong.of(2))));
        write(inputs.resolve("streamMarker/deleting"), StreamMarkerFile.encode(new StreamMarker("acme", "ns", "évents",
                OptionalLong.empty(), true, OptionalLong.empty())));

        // The checksum-fixing targets start from the same inputs.
        for (String target : List.of("manifest", "ballot", "epochs", "keyIndex", "producers", "registration", "replica",
                "runState", "storageId")) {
            copyDirectory(inputs.resolve(target), inputs.resolve(target + "WithValidChecksum"));
        }
        // That target appends the crc32 line itself: its inputs are markers without it.
        try (var markers = Files.list(inputs.resolve("streamMarker"))) {
            for (Path f : (Iterable<Path>) markers::iterator) {
                String text = Files.readString(f);
                String body = text.substring(0, text.lastIndexOf("crc32="));
                write(inputs.resolve("streamMarkerWithValidChecksum").resolve(f.getFileName().toString()),
                        body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        copyDirectory(inputs.resolve("segmentScanner"), inputs.resolve("segmentScannerWithValidChecksums"));
    }

    private static void copyDirectory(Path from, Path to) throws IOException {
        try (var files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                copy(f, to.resolve(f.getFileName().toString()));
            }
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        write(to, Files.readAllBytes(from));
    }

    private static void write(Path to, byte[] bytes) throws IOException {
        Files.createDirectories(to.getParent());
        Files.write(to, bytes);
    }
}
