package dev.felix.offload.log;

import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.side.BatchLocation;
import dev.felix.offload.log.side.OpenBatch;
import dev.felix.offload.log.side.ProducerEntry;
import dev.felix.offload.log.side.ProducerSnapshot;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Each idempotent producer's place in the log, derived from the marks on its records: the newest
 * sequence held, where its recent batches landed, and a batch still waiting for records.
 *
 * <p>A batch is held once its last record is. A batch-open record followed by anything but the
 * batch-continue record that extends it leaves the batch abandoned: it is not held, and the producer
 * may send that sequence again. What is remembered is a function of the log alone, so every replica
 * computes the same: a producer's last {@value #MAX_BATCHES_PER_PRODUCER} batches, at most
 * {@value #MAX_PRODUCERS} producers (past that, the one whose newest batch is oldest is forgotten),
 * and a producer none of whose batches is left in the log is forgotten.
 *
 * <p>Not thread-safe: the shard log's single writer owns it.
 */
public final class ProducerState {

    public static final int MAX_BATCHES_PER_PRODUCER = 64;
    public static final int MAX_PRODUCERS = 4096;

    private static final class Producer {
        final long id;
        long lastSequence;
        /** Held batches, oldest first. */
        final Deque<Batch> batches = new ArrayDeque<>();

        Producer(long id) {
            this.id = id;
        }

        long newestFirst() {
            return batches.isEmpty() ? 0 : batches.peekLast().first;
        }
    }

    /**
     * A held batch. A snapshot keeps only where batches are, and the newest sequence; the sequence of
     * an older batch restored from one is read back from its batch-open record when first needed.
     */
    private static final class Batch {
        final long first;
        final long len;
        long sequence;
        boolean sequenceKnown;

        Batch(long first, long len, long sequence, boolean sequenceKnown) {
            this.first = first;
            this.len = len;
            this.sequence = sequence;
            this.sequenceKnown = sequenceKnown;
        }
    }

    /** Reads the sequence from the batch-open record at an offset of the log. */
    @FunctionalInterface
    public interface SequenceLookup {
        long sequenceAt(long firstOffset) throws java.io.IOException;
    }

    private final Map<Long, Producer> producers = new HashMap<>();
    /** The batch waiting for records, or null: producer, sequence, len, first, held. */
    private long[] open;

    /** Empty state: no producer known. */
    public ProducerState() {
    }

    /** The state a snapshot describes (as of {@link ProducerSnapshot#asOf()}). */
    public static ProducerState of(ProducerSnapshot snapshot) {
        ProducerState state = new ProducerState();
        for (ProducerEntry e : snapshot.producers()) {
            Producer p = new Producer(e.id());
            p.lastSequence = e.lastSequence();
            for (BatchLocation b : e.batches()) {
                p.batches.addLast(new Batch(b.first(), b.len(), 0, false));
            }
            if (!p.batches.isEmpty()) {
                Batch newest = p.batches.peekLast();
                newest.sequence = e.lastSequence();
                newest.sequenceKnown = true;
            }
            state.producers.put(e.id(), p);
        }
        OpenBatch o = snapshot.open();
        if (o != null) {
            state.open = new long[] {o.producerId(), o.sequence(), o.len(), o.first(), o.held()};
        }
        return state;
    }

    /** This state as a snapshot covering every record below {@code asOf}. */
    public ProducerSnapshot snapshot(long asOf) {
        List<ProducerEntry> entries = new ArrayList<>(producers.size());
        producers.values().stream().sorted((a, b) -> Long.compareUnsigned(a.id, b.id)).forEach(p -> {
            List<BatchLocation> batches = new ArrayList<>(p.batches.size());
            for (Batch b : p.batches) {
                batches.add(new BatchLocation(b.first, b.len));
            }
            entries.add(new ProducerEntry(p.id, p.lastSequence, batches));
        });
        OpenBatch o = open == null ? null : new OpenBatch(open[0], open[1], open[2], open[3], open[4]);
        return new ProducerSnapshot(asOf, o, entries);
    }

    /** Becomes a copy of {@code other} (the log's writer replaces its state after a load or a truncation). */
    void replaceWith(ProducerState other) {
        producers.clear();
        producers.putAll(other.producers);
        open = other.open == null ? null : other.open.clone();
    }

    /** Takes the next record of the log into account, in offset order. */
    public void observe(RecordKind kind, long offset, BatchTag tag) {
        switch (kind) {
            case BATCH_OPEN -> {
                open = new long[] {tag.producerId(), tag.sequence(), tag.recordCount(), offset, 1};
                completeIfWhole();
            }
            case BATCH_CONTINUE -> {
                if (open != null && offset == open[3] + open[4]) {
                    open[4]++;
                    completeIfWhole();
                } else {
                    open = null; // continues nothing we know of: nothing to hold
                }
            }
            default -> open = null; // any other record abandons a batch still waiting
        }
    }

    private void completeIfWhole() {
        if (open[4] < open[2]) {
            return;
        }
        long producerId = open[0];
        Producer p = producers.get(producerId);
        if (p == null) {
            if (producers.size() >= MAX_PRODUCERS) {
                forgetOldestProducer();
            }
            p = new Producer(producerId);
            producers.put(producerId, p);
        }
        p.batches.addLast(new Batch(open[3], open[2], open[1], true));
        if (p.batches.size() > MAX_BATCHES_PER_PRODUCER) {
            p.batches.removeFirst();
        }
        p.lastSequence = open[1];
        open = null;
    }

    private void forgetOldestProducer() {
        Producer oldest = null;
        for (Producer p : producers.values()) {
            if (oldest == null || Long.compareUnsigned(p.newestFirst(), oldest.newestFirst()) < 0) {
                oldest = p;
            }
        }
        producers.remove(oldest.id);
    }

    /**
     * The first offset of the held batch {@code sequence} of {@code producerId}, when it is remembered;
     * sequences not yet known are read through {@code lookup}.
     */
    public OptionalLong heldBatch(long producerId, long sequence, SequenceLookup lookup) throws java.io.IOException {
        Producer p = producers.get(producerId);
        if (p == null) {
            return OptionalLong.empty();
        }
        // Known sequences first (the newest always is); older ones restored from a snapshot are read
        // from the log only when needed.
        for (Batch b : p.batches) {
            if (b.sequenceKnown && b.sequence == sequence) {
                return OptionalLong.of(b.first);
            }
        }
        for (Batch b : p.batches) {
            if (!b.sequenceKnown) {
                b.sequence = lookup.sequenceAt(b.first);
                b.sequenceKnown = true;
                if (b.sequence == sequence) {
                    return OptionalLong.of(b.first);
                }
            }
        }
        return OptionalLong.empty();
    }

    /** The record count of the held batch starting at {@code firstOffset} of {@code producerId}, or -1. */
    public long batchLength(long producerId, long firstOffset) {
        Producer p = producers.get(producerId);
        if (p != null) {
            for (Batch b : p.batches) {
                if (b.first == firstOffset) {
                    return b.len;
                }
            }
        }
        return -1;
    }

    /** The newest sequence held for {@code producerId}, when the producer is known. */
    public OptionalLong lastSequence(long producerId) {
        Producer p = producers.get(producerId);
        return p == null ? OptionalLong.empty() : OptionalLong.of(p.lastSequence);
    }

    /** True while a batch-open has been seen and its batch is not yet whole. */
    public boolean hasOpenBatch() {
        return open != null;
    }

    /** How many producers are known. */
    public int producerCount() {
        return producers.size();
    }

    /**
     * Forgets batches that lie wholly below {@code oldestOffset} (retention removed them), and
     * producers left with none.
     */
    public void forgetBelow(long oldestOffset) {
        for (Iterator<Producer> it = producers.values().iterator(); it.hasNext(); ) {
            Producer p = it.next();
            while (!p.batches.isEmpty()) {
                Batch b = p.batches.peekFirst();
                if (Long.compareUnsigned(b.first + b.len, oldestOffset) <= 0) {
                    p.batches.removeFirst();
                } else {
                    break;
                }
            }
            if (p.batches.isEmpty()) {
                it.remove();
            }
        }
        if (open != null && Long.compareUnsigned(open[3], oldestOffset) < 0) {
            open = null;
        }
    }
}
