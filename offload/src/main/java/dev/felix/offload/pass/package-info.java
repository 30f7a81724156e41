/**
 * The offload pass. {@link dev.felix.offload.pass.OffloadPass} runs one pass over a data root;
 * {@link dev.felix.offload.pass.ShardOffload} takes one shard's sealed segments oldest first through
 * validate, upload, prove ({@link dev.felix.offload.copy.CopyProver}), record in the manifest and only
 * then unlink. {@code ShardPipeline} runs one attempt at a shard: segments scanned in order while older
 * ones upload, commits oldest first, uploads bounded by {@code InFlightUploads};
 * {@code SegmentPreparation} is the one read of a segment before its upload. A
 * {@link dev.felix.offload.pass.ShardResult} says how far a shard got and, as a
 * {@link dev.felix.offload.pass.ShardStop}, why it stopped. The rule for how many sealed segments a
 * shard keeps locally is {@link dev.felix.offload.copy.LocalRetention}.
 */
package dev.felix.offload.pass;
