/**
 * Retention of offloaded shards. Uses <code>offload</code>
 * (its root lock, node id and key layout), <code>manifest</code>, <code>object-store</code> and
 * <code>local-log</code>.
 *
 * <h2>Settings</h2>
 * {@link dev.felix.offload.retention.RetentionSettings} holds the four limits of a shard
 * ({@code local.retention.bytes}, {@code local.retention.ms}, {@code retention.bytes},
 * {@code retention.ms}; -1 unlimited, every one unlimited by default).
 * {@link dev.felix.offload.retention.RetentionRules} holds the defaults of a data root and overrides by
 * stream pattern ({@link dev.felix.offload.retention.StreamPattern}, {@code tenant/namespace/stream}
 * with {@code *}) and by shard directory, and answers
 * {@link dev.felix.offload.retention.RetentionRules#settingsFor(java.nio.file.Path)}.
 *
 * <h2>One retention pass</h2>
 * {@link dev.felix.offload.retention.RetentionPass#run} takes the root's lock and runs, in order:
 * {@link dev.felix.offload.retention.ShardRetention} for each shard (local retention of segments with a
 * verified copy, then remote retention: manifest first, objects after),
 * {@link dev.felix.offload.retention.DeletedStreams} for {@code .deleted/}, and an
 * {@link dev.felix.offload.retention.OrphanSweep} of this node's key prefix. It answers a
 * {@link dev.felix.offload.retention.RetentionReport} whose sums are the metrics (segments and bytes
 * removed locally and remotely, orphans found and deleted, deleted-stream directories removed,
 * failures by shard). Each part can also run on its own; the caller then holds the root's lock
 * itself (a dry-run sweep, which changes nothing, needs none).
 *
 * <p>The scheduler that runs these passes is in the daemon module ({@code dev.felix.offload.schedule});
 * the {@link dev.felix.offload.copy.StopSignal} a pass checks is in {@code offload}.
 *
 * <p>The module's {@code README.md} shows how the daemon wires these together.
 */
package dev.felix.offload.retention;
