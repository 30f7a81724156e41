/**
 * Object stores behind small role interfaces (upload, fetch, list, delete), with one checked
 * exception tree for what a store answers, the key rules, the store URI and the retry policy.
 * This module knows nothing of segments, shards or manifests: it moves bytes under keys.
 *
 * <p>Implementations: {@code fs} (the local filesystem store, the embedded default) and
 * {@code remote} (every S3-compatible server, the logic written once over the wire calls that
 * {@code s3} and {@code minio} make through their clients).
 */
package dev.felix.offload.store;
