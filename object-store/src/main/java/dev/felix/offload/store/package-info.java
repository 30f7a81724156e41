/**
 * Object stores behind small role interfaces (upload, fetch, list, delete): the local
 * filesystem store that is the embedded default, S3 through the AWS SDK for Java v2, and MinIO
 * through the MinIO Java client, with one checked exception tree for what a store answers. This
 * module knows nothing of segments, shards or manifests: it moves bytes under keys.
 */
package dev.felix.offload.store;
