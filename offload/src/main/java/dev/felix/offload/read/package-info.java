/**
 * Reads below the local base offset: {@link dev.felix.offload.read.TieredReader} finds the manifest
 * entry holding an offset, seeks with the segment's remote index and serves records from the store
 * through {@link dev.felix.offload.read.ChunkCache}, which caches fixed-size chunks by bytes and
 * reads ahead for sequential readers. Nothing here writes to the data root or the store.
 */
package dev.felix.offload.read;
