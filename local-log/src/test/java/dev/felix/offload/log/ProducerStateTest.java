package dev.felix.offload.log;

import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.RecordKind;
import org.junit.jupiter.api.Test;

import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

class ProducerStateTest {

    private static final ProducerState.SequenceLookup NO_LOOKUP = offset -> {
        throw new AssertionError("every sequence is known in memory");
    };

    /** Appends a whole batch of {@code n} records at {@code first}; answers the next offset. */
    private static long batch(ProducerState s, long producer, long sequence, long first, int n) {
        s.observe(RecordKind.BATCH_OPEN, first, new BatchTag(producer, sequence, n));
        for (int i = 1; i < n; i++) {
            s.observe(RecordKind.BATCH_CONTINUE, first + i, null);
        }
        return first + n;
    }

    @Test
    void aWholeBatchIsHeldAndAnAbandonedOneIsNot() throws Exception {
        ProducerState s = new ProducerState();
        long next = batch(s, 1, 0, 0, 3);
        s.observe(RecordKind.BATCH_OPEN, next, new BatchTag(1, 1, 3));
        s.observe(RecordKind.BATCH_CONTINUE, next + 1, null);
        assertThat(s.hasOpenBatch()).isTrue();
        s.observe(RecordKind.PLAIN, next + 2, null); // abandons it
        assertThat(s.hasOpenBatch()).isFalse();
        assertThat(s.heldBatch(1, 0, NO_LOOKUP)).isEqualTo(OptionalLong.of(0));
        assertThat(s.heldBatch(1, 1, NO_LOOKUP)).isEmpty();
        assertThat(s.lastSequence(1)).isEqualTo(OptionalLong.of(0));
    }

    @Test
    void aProducerRemembersItsLast64Batches() throws Exception {
        ProducerState s = new ProducerState();
        long next = 0;
        for (int seq = 0; seq < 70; seq++) {
            next = batch(s, 5, seq, next, 2);
        }
        assertThat(s.heldBatch(5, 5, NO_LOOKUP)).isEmpty();
        assertThat(s.heldBatch(5, 6, NO_LOOKUP)).isEqualTo(OptionalLong.of(12));
        assertThat(s.snapshot(next).producers().get(0).batches()).hasSize(ProducerState.MAX_BATCHES_PER_PRODUCER);
    }

    @Test
    void past4096ProducersTheOneWhoseNewestBatchIsOldestIsForgotten() throws Exception {
        ProducerState s = new ProducerState();
        long next = 0;
        for (long p = 0; p < ProducerState.MAX_PRODUCERS; p++) {
            next = batch(s, p, 0, next, 1);
        }
        next = batch(s, 0, 1, next, 1); // producer 0 writes again: now producer 1's newest batch is the oldest
        next = batch(s, ProducerState.MAX_PRODUCERS, 0, next, 1);
        assertThat(s.producerCount()).isEqualTo(ProducerState.MAX_PRODUCERS);
        assertThat(s.lastSequence(0)).isPresent();
        assertThat(s.lastSequence(1)).as("producer 1's newest batch was the oldest").isEmpty();
    }

    @Test
    void aSnapshotRoundTripsAndOlderSequencesAreLookedUp() throws Exception {
        ProducerState s = new ProducerState();
        long next = batch(s, 9, 10, 0, 2);
        next = batch(s, 9, 11, next, 2);
        ProducerState restored = ProducerState.of(s.snapshot(next));
        assertThat(restored.heldBatch(9, 11, NO_LOOKUP)).isEqualTo(OptionalLong.of(2));
        assertThat(restored.heldBatch(9, 10, offset -> offset == 0 ? 10 : -1)).isEqualTo(OptionalLong.of(0));
        assertThat(restored.snapshot(next)).isEqualTo(s.snapshot(next));
    }

    @Test
    void retentionForgetsBatchesAndProducersBelowTheOldestRecord() throws Exception {
        ProducerState s = new ProducerState();
        long next = batch(s, 1, 0, 0, 2);
        next = batch(s, 2, 0, next, 2);
        s.forgetBelow(2);
        assertThat(s.lastSequence(1)).isEmpty();
        assertThat(s.lastSequence(2)).isPresent();
        assertThat(next).isEqualTo(4);
    }
}
