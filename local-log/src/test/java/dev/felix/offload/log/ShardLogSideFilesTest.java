package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.side.Ballot;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ProducerSnapshot;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** ShardLog with its side files: producers, epochs, replica and ballot. */
class ShardLogSideFilesTest {

    private static final ShardLogConfig SMALL = ShardLogConfig.defaults().withSegmentSizeBytes(1024)
            .withIndexSpacingBytes(128);

    @TempDir
    Path dir;

    private static List<byte[]> batch(String... payloads) {
        List<byte[]> out = new ArrayList<>();
        for (String p : payloads) {
            out.add(p.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    private static List<Record> all(ShardLog log) throws Exception {
        return ((ReadResult.Records) log.read(log.firstOffset(), 100_000, Long.MAX_VALUE)).records();
    }

    @Test
    void aBatchTheLogHoldsIsNotWrittenAgainEvenAfterARestart() throws Exception {
        long first;
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.append(1, "x".getBytes(StandardCharsets.UTF_8));
            first = log.appendBatch(7, 3, 5, batch("a", "b", "c"));
            assertThat(log.appendBatch(7, 3, 5, batch("a", "b", "c"))).isEqualTo(first);
            assertThat(log.nextOffset()).isEqualTo(4);
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.appendBatch(7, 3, 5, batch("a", "b", "c"))).isEqualTo(first);
            assertThat(log.appendBatch(7, 4, 5, batch("d"))).isEqualTo(4);
            assertThat(all(log)).hasSize(5);
        }
    }

    @Test
    void anAbandonedBatchIsNotHeldSoItsSequenceMayComeAgain() throws Exception {
        Files.createDirectories(dir);
        // A leader wrote the first record of a 3-record batch, then a plain record: the batch was abandoned.
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 0), dev.felix.offload.log.format.SegmentHeader.v3(0, 0), 128)) {
            w.append(Record.batchOpen(0, 1, new dev.felix.offload.log.format.BatchTag(5, 1, 3), new byte[] {1}));
            w.append(Record.plain(1, 1, new byte[] {2}));
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.appendBatch(5, 1, 2, batch("again", "whole", "now"))).isEqualTo(2);
            assertThat(log.appendBatch(5, 1, 2, batch("again", "whole", "now"))).isEqualTo(2);
            assertThat(log.nextOffset()).isEqualTo(5);
        }
    }

    @Test
    void theProducerSnapshotIsSavedAtRolloverAndADamagedOneIsRebuiltFrom() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            for (int i = 0; i < 60; i++) {
                log.appendBatch(100 + (i % 3), i, i, batch("p" + i, "q" + i));
            }
            assertThat(log.segments().size()).isGreaterThan(2);
        }
        ProducerSnapshot snapshot = ProducersFile.FILE.loadDerived(dir).value().orElseThrow();
        assertThat(snapshot.producers()).hasSize(3);
        // Use the snapshot: duplicates found both before and after as_of.
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            long next = log.nextOffset();
            assertThat(log.appendBatch(101, 58, 0, batch("x", "y"))).isLessThan(next);
            assertThat(log.appendBatch(100, 0, 0, batch("x", "y"))).isZero();
            assertThat(log.nextOffset()).isEqualTo(next);
        }
        Files.write(ProducersFile.FILE.fileIn(dir), "garbage".getBytes(StandardCharsets.UTF_8));
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            long next = log.nextOffset();
            assertThat(log.appendBatch(102, 59, 0, batch("x", "y"))).isLessThan(next);
            assertThat(log.nextOffset()).isEqualTo(next);
        }
    }

    @Test
    void aTruncationRemovesTheSnapshotFirstAndForgetsBatchesPastTheCut() throws Exception {
        long batchAt;
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            for (int i = 0; i < 40; i++) {
                log.append(i, new byte[60]);
            }
            batchAt = log.appendBatch(9, 1, 0, batch("late"));
            for (int i = 0; i < 20; i++) {
                log.append(i, new byte[60]);
            }
            assertThat(Files.exists(ProducersFile.FILE.fileIn(dir))).isTrue();
            log.truncate(batchAt);
            assertThat(Files.exists(ProducersFile.FILE.fileIn(dir))).isFalse();
            // The batch is gone, so the same sequence is written again.
            assertThat(log.appendBatch(9, 1, 0, batch("late"))).isEqualTo(batchAt);
            assertThat(log.nextOffset()).isEqualTo(batchAt + 1);
        }
    }

    @Test
    void generationStartsAreRecordedInEpochsAndTruncatedWithTheLog() throws Exception {
        ShardLogConfig config = SMALL.withGenerationStartFinalized(true);
        try (ShardLog log = ShardLog.open(dir, config)) {
            log.append(1, new byte[1]);
            long g2 = log.appendGenerationStart(2, 2);
            log.append(3, new byte[1]);
            long g3 = log.appendGenerationStart(3, 4);
            assertThat(log.epochs().entries()).extracting(e -> e.generation()).containsExactly(2L, 3L);
            log.truncate(g3);
            assertThat(log.epochs().entries()).extracting(e -> e.startOffset()).containsExactly(g2);
        }
        assertThat(EpochsFile.loadOrEmpty(dir).size()).isEqualTo(1);
        try (ShardLog log = ShardLog.open(dir, config)) {
            assertThat(log.epochs().size()).isEqualTo(1);
            assertThat(all(log)).extracting(Record::kind).contains(RecordKind.GENERATION_START);
        }
    }

    @Test
    void aRaisedGenerationIsDurableBeforeAcceptReturnsAndAStaleLeaderIsRefused() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.acceptGeneration(4, "broker-a");
            assertThat(ReplicaFile.load(dir).generation()).isEqualTo(4);
            assertThat(BallotFile.FILE.load(dir)).contains(new Ballot(4, "broker-a"));
            log.acceptGeneration(4, "broker-a");
            assertThatThrownBy(() -> log.acceptGeneration(4, "broker-b")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> log.acceptGeneration(3, "broker-c")).isInstanceOf(IllegalArgumentException.class);
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.replicaState().generation()).isEqualTo(4);
            assertThat(log.acceptedLeader()).contains("broker-a");
        }
    }

    @Test
    void aBallotAheadOfTheReplicaFinishesTheRaiseAtOpen() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.acceptGeneration(2, "a");
        }
        BallotFile.FILE.save(dir, new Ballot(3, "b")); // crashed between the ballot and the replica
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.replicaState().generation()).isEqualTo(3);
            assertThat(log.acceptedLeader()).contains("b");
        }
        assertThat(ReplicaFile.load(dir).generation()).isEqualTo(3);
    }

    @Test
    void aDamagedReplicaFailsTheOpenAndIsLeftAlone() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.append(1, new byte[1]);
        }
        byte[] garbage = "not a replica file at all, 28+".getBytes(StandardCharsets.UTF_8);
        Files.write(ReplicaFile.FILE.fileIn(dir), garbage);
        assertThatThrownBy(() -> ShardLog.open(dir, SMALL)).isInstanceOf(CorruptionException.class)
                .hasMessageContaining("replica");
        assertThat(Files.readAllBytes(ReplicaFile.FILE.fileIn(dir))).isEqualTo(garbage);
    }

    @Test
    void theCommitOffsetIsWrittenBehindAndAlwaysAtClose() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL.withFsyncPolicy(FsyncPolicy.periodic(Duration.ofSeconds(30))))) {
            for (int i = 0; i < 10; i++) {
                log.append(i, new byte[1]);
            }
            log.advanceCommit(5);
            log.advanceCommit(3); // lower: ignored
            assertThat(log.replicaState().commit()).isEqualTo(5);
        }
        assertThat(ReplicaFile.load(dir)).isEqualTo(new ReplicaState(0, 5));
    }

    @Test
    void underOnCommitTheCommitOffsetReachesTheFileWithoutAClose() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.append(1, new byte[1]);
            log.append(2, new byte[1]);
            log.advanceCommit(2);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (ReplicaFile.load(dir).commit() != 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(ReplicaFile.load(dir).commit()).isEqualTo(2);
        }
    }

    @Test
    void truncationAndResetBelowTheCommitOffsetAreRefused() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            for (int i = 0; i < 30; i++) {
                log.append(i, new byte[40]);
            }
            log.advanceCommit(20);
            assertThatThrownBy(() -> log.truncate(19)).isInstanceOf(BelowCommitException.class)
                    .hasMessageContaining("commit offset 20");
            assertThatThrownBy(() -> log.reset(100)).isInstanceOf(BelowCommitException.class);
            assertThat(log.nextOffset()).isEqualTo(30);
            log.truncate(20); // at the commit offset: nothing committed is discarded
            assertThat(log.nextOffset()).isEqualTo(20);
        }
    }

    @Test
    void aGivenUpGenerationNamesNoLeader() throws Exception {
        BallotFile.FILE.save(Files.createDirectories(dir), Ballot.givenUp(6));
        ReplicaFile.FILE.save(dir, new ReplicaState(6, 0));
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.acceptedLeader()).isEqualTo(Optional.empty());
            assertThatThrownBy(() -> log.acceptGeneration(6, "x")).isInstanceOf(IllegalArgumentException.class);
            log.acceptGeneration(7, "x");
        }
    }
}
