/**
 * What makes a data root itself and what belongs to it: the root lock every writing pass holds
 * ({@link dev.felix.offload.root.RootLock}), the node id and the root's identity file, the node claim
 * in the store that stops two roots from sharing one node id ({@link dev.felix.offload.root.NodeClaimCheck}),
 * the object keys of a shard's segments ({@link dev.felix.offload.root.SegmentKeys}) and the rule that
 * says whether an object provably belongs to a shard ({@link dev.felix.offload.root.KeyOwnership}).
 * Passes, retention, restore and the read-only commands all use it.
 */
package dev.felix.offload.root;
