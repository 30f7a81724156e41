/**
 * When passes run: the cron {@link dev.felix.offload.schedule.Schedule} (5 fields Unix, 6 or 7
 * Quartz), the {@link dev.felix.offload.schedule.PassScheduler} that runs each named
 * {@link dev.felix.offload.schedule.Pass} on its own thread (never overlapping itself, never making up
 * missed fire times, stopping with the {@code StopSignal} and then an interrupt), the
 * {@link dev.felix.offload.schedule.PassClock} it goes by (tests move a
 * {@link dev.felix.offload.schedule.ManualPassClock}), the {@link dev.felix.offload.schedule.PassOutcome}
 * of each run, the {@link dev.felix.offload.schedule.StandardPass} defaults, and the
 * {@link dev.felix.offload.schedule.DataRootGuard} that keeps one process's passes over a data root apart.
 *
 * <p>It serves every kind of pass, so it knows none of them: it lives in the daemon module, beside the
 * one user that wires passes to it, and not in {@code retention} where it began. The
 * {@code StopSignal} a pass is handed stays below, in {@code offload}'s {@code pass} package, because
 * retention's passes take it and retention may not use this module.
 */
package dev.felix.offload.schedule;
