/**
 * A shard's side files and the data root's identity files: one class per file kind, each holding
 * the kind's byte layout, its codec and the load rule the Felix Durable Segment Format v4 gives it.
 *
 * <p>Two families of load rule:
 * <ul>
 *   <li><b>Authoritative</b> ({@code replica}, {@code ballot}, {@code storage-id}, {@code run-state},
 *       {@code registration}, the {@code .streams/} markers): absent reads as the kind's "nothing",
 *       a present file that does not decode throws its {@link dev.felix.offload.log.format.CorruptionException}
 *       and is left untouched.</li>
 *   <li><b>Derived</b> ({@code epochs}, {@code producers}, {@code keys.idx}): absent or damaged loads as
 *       nothing, and the {@link dev.felix.offload.log.side.DerivedLoad} says which and why, so fsck can
 *       report it.</li>
 * </ul>
 *
 * <p>Every file is written through {@link dev.felix.offload.log.DurableFiles} with the sync its
 * section of the spec asks for. An I/O error (other than the file being absent) always propagates,
 * for both families: it says nothing about the bytes. The byte layouts and rules are also written
 * up in {@code docs/storage-format.md}.
 */
package dev.felix.offload.log.side;
