/**
 * Reads below the local base offset: {@link dev.felix.offload.read.TieredReader} finds the manifest
 * entry holding an offset and reads that copy with local-log's one seek-and-scan
 * ({@code IndexedScan}, entered at the copy's remote index, which it never trusts) over
 * {@link dev.felix.offload.read.ObjectSegmentSource}: the object's bytes through
 * {@link dev.felix.offload.read.ChunkCache}, which caches fixed-size chunks by bytes and reads ahead
 * for sequential readers. Nothing here writes to the data root or the store.
 */
package dev.felix.offload.read;
