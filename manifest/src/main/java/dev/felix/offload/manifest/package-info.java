/**
 * The <code>offload.manifest</code> file of a shard: its codec (format <code>FLOF</code>), the
 * immutable manifest value with the operations offload and retention need, and its atomic
 * replacement through the durable-file helper of <code>local-log</code>. Depends on
 * <code>local-log</code> only.
 */
package dev.felix.offload.manifest;
