/**
 * Scrub: {@link dev.felix.offload.scrub.Scrub} checks every manifest entry against its object in the
 * store (HEAD, size, CRC32 on a rotating share read in full), lists orphans and held shards with a
 * dry-run {@code OrphanSweep}, and reports anomalies by kind; it changes nothing.
 * {@link dev.felix.offload.scrub.ReaderClaimCheck} is the node-claim check of a command that only
 * reads the store ({@code scrub}, {@code read}).
 *
 * <p>Why here: scrub uses retention ({@code OrphanSweep}, {@code LocalCopyCheck}) and offload
 * ({@code CopyDifference}, the root's keys and lock), so it can sit no lower than retention's
 * level; it runs either as the daemon's scheduled pass (holding the
 * {@link dev.felix.offload.schedule.DataRootGuard} while it lists orphans) or once from the
 * {@code scrub} command, and nothing below the daemon needs it. It is its own package so the
 * command and the daemon share it without it knowing either: it imports {@code schedule}, never
 * {@code daemon}.
 */
package dev.felix.offload.scrub;
