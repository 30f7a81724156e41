/**
 * The daemon behind {@code felix-offload run}: {@link dev.felix.offload.daemon.Daemon} brings it up
 * (the store's start-up checks are {@link dev.felix.offload.daemon.StoreProbe}) and down (within a
 * patience, {@link dev.felix.offload.daemon.StopSequence}), has
 * {@link dev.felix.offload.daemon.ScheduledPasses} run the offload, retention and scrub passes on the
 * {@link dev.felix.offload.schedule.PassScheduler}, and serves
 * {@link dev.felix.offload.daemon.StatusServer} ({@code /health}, {@code /metrics}, {@code /shards},
 * {@code /read} through {@link dev.felix.offload.daemon.ReadEndpoint}). Its configuration is
 * {@link dev.felix.offload.daemon.DaemonConfig} (read by {@link dev.felix.offload.daemon.ConfigFile},
 * refused with a {@link dev.felix.offload.daemon.ConfigException} naming the key), which the one-shot
 * commands read too; its Prometheus metrics are {@link dev.felix.offload.daemon.DaemonMetrics}, with
 * {@link dev.felix.offload.daemon.MeteredStore} counting store calls; the per-shard status it serves
 * and the demo prints is {@link dev.felix.offload.daemon.ShardSurvey}. A start it refuses is a
 * {@link dev.felix.offload.daemon.StartRefusedException}, which the command reports as a usage error.
 *
 * <p>{@link dev.felix.offload.daemon.Json}, {@link dev.felix.offload.daemon.RecordLines} and
 * {@link dev.felix.offload.daemon.Bytes} are the output forms the HTTP endpoint and the commands share
 * (one JSON writer, one record line, one byte count), so a record reads the same from {@code /read} and
 * from {@code felix-offload read}. {@link dev.felix.offload.daemon.ReplicaCommit} is the commit offset
 * the offload pass may copy up to, for the daemon and the offload command alike.
 *
 * <p>The module sits above retention and below cli: it uses every library module, and only cli uses it.
 */
package dev.felix.offload.daemon;
