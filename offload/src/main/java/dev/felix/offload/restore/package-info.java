/**
 * Disaster recovery: {@link dev.felix.offload.restore.ShardRestore} rebuilds a shard's manifest from
 * what the store holds under the shard's prefix, checking every object's header and records before
 * it is named, and writes the manifest through the durable-file helper.
 */
package dev.felix.offload.restore;
