/**
 * The S3 wire calls through the MinIO Java client ({@code minio://} store URIs), including the
 * one request its public API cannot make (the plain multipart upload listing). Every rule lives in
 * {@code remote.RemoteStore}.
 */
package dev.felix.offload.store.minio;
