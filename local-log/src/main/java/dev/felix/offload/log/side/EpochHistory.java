package dev.felix.offload.log.side;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where each leadership generation of a shard began: {@link Epoch} entries, generations strictly
 * ascending and start offsets never descending (a generation that wrote nothing before it was replaced
 * starts where its successor does), both compared as unsigned 64-bit values. Immutable; every
 * operation returns a new history.
 *
 * <p>The history is bounded to {@link #MAX_ENTRIES} entries, what the file's u16 count can hold:
 * every open reads the whole file. {@link #append} at the bound forgets the oldest entry, which
 * describes the records furthest below anything two brokers can still diverge within.
 *
 * @param entries the entries, oldest first
 */
public record EpochHistory(List<Epoch> entries) {

    /** The most entries a history holds: the largest u16 count. */
    public static final int MAX_ENTRIES = 0xFFFF;

    private static final EpochHistory EMPTY = new EpochHistory(List.of());

    /**
     * @throws IllegalArgumentException when there are more than {@link #MAX_ENTRIES} entries, or a
     *                                  generation is not above the one before it, or a start offset
     *                                  is below the one before it
     */
    public EpochHistory {
        entries = List.copyOf(entries);
        if (entries.size() > MAX_ENTRIES) {
            throw new IllegalArgumentException("a history holds at most " + MAX_ENTRIES + " entries, got "
                    + entries.size());
        }
        for (int i = 1; i < entries.size(); i++) {
            String problem = orderProblem(entries.get(i - 1), entries.get(i));
            if (problem != null) {
                throw new IllegalArgumentException("entry " + i + ": " + problem);
            }
        }
    }

    /** The history of a shard no generation is known for. */
    public static EpochHistory empty() {
        return EMPTY;
    }

    /** Why {@code next} may not follow {@code previous}, or null when it may. */
    static String orderProblem(Epoch previous, Epoch next) {
        if (Long.compareUnsigned(next.generation(), previous.generation()) <= 0) {
            return "generation " + Long.toUnsignedString(next.generation()) + " is not above the previous "
                    + Long.toUnsignedString(previous.generation());
        }
        if (Long.compareUnsigned(next.startOffset(), previous.startOffset()) < 0) {
            return "start offset " + Long.toUnsignedString(next.startOffset()) + " is below the previous "
                    + Long.toUnsignedString(previous.startOffset());
        }
        return null;
    }

    public int size() {
        return entries.size();
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The newest entry: the generation that writes now. */
    public Optional<Epoch> last() {
        return entries.isEmpty() ? Optional.empty() : Optional.of(entries.get(entries.size() - 1));
    }

    /**
     * The history with {@code generation} starting at {@code startOffset}. At {@link #MAX_ENTRIES}
     * the oldest entry is forgotten to make room.
     *
     * @throws IllegalArgumentException when {@code generation} is not above the newest entry's, or
     *                                  {@code startOffset} is below its start
     */
    public EpochHistory append(long generation, long startOffset) {
        Epoch next = new Epoch(generation, startOffset);
        Optional<Epoch> last = last();
        if (last.isPresent()) {
            String problem = orderProblem(last.get(), next);
            if (problem != null) {
                throw new IllegalArgumentException("cannot append " + next + ": " + problem);
            }
        }
        List<Epoch> grown = new ArrayList<>(entries.size() + 1);
        grown.addAll(entries.size() == MAX_ENTRIES ? entries.subList(1, entries.size()) : entries);
        grown.add(next);
        return new EpochHistory(grown);
    }

    /**
     * The history after the log is truncated at {@code offset} (every record at or past it removed):
     * the entries starting at or after it are dropped, since the generations they name wrote nothing
     * that is left.
     */
    public EpochHistory truncatedAt(long offset) {
        int keep = 0;
        while (keep < entries.size() && Long.compareUnsigned(entries.get(keep).startOffset(), offset) < 0) {
            keep++;
        }
        return keep == entries.size() ? this : new EpochHistory(entries.subList(0, keep));
    }

    /**
     * The history once every record below {@code oldestOffset} is gone: the entries that describe only
     * removed records are dropped. The entry that wrote the record at {@code oldestOffset} (the last
     * one starting at or below it) is kept, and so is everything after it.
     */
    public EpochHistory retainedFrom(long oldestOffset) {
        int first = 0;
        while (first + 1 < entries.size()
                && Long.compareUnsigned(entries.get(first + 1).startOffset(), oldestOffset) <= 0) {
            first++;
        }
        return first == 0 ? this : new EpochHistory(entries.subList(first, entries.size()));
    }

    /**
     * The generation that wrote the record at {@code offset}: the newest entry starting at or below it;
     * empty when the offset lies below every entry.
     */
    public OptionalLong generationAt(long offset) {
        for (int i = entries.size() - 1; i >= 0; i--) {
            Epoch e = entries.get(i);
            if (Long.compareUnsigned(e.startOffset(), offset) <= 0) {
                return OptionalLong.of(e.generation());
            }
        }
        return OptionalLong.empty();
    }

    /** Where {@code generation} began, if the history names it. */
    public OptionalLong startOf(long generation) {
        for (Epoch e : entries) {
            if (e.generation() == generation) {
                return OptionalLong.of(e.startOffset());
            }
        }
        return OptionalLong.empty();
    }

    @Override
    public String toString() {
        return "EpochHistory" + Objects.toString(entries);
    }
}
