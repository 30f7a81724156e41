package dev.felix.offload.log.side;

/**
 * One entry of a shard's generation history: the leadership generation that wrote the records from
 * {@code startOffset} on (up to the next entry's start). Both are unsigned 64-bit values.
 *
 * @param generation  the leadership generation
 * @param startOffset the offset of the first record that generation wrote
 */
public record Epoch(long generation, long startOffset) {

    @Override
    public String toString() {
        return "generation " + Long.toUnsignedString(generation) + " from " + Long.toUnsignedString(startOffset);
    }
}
