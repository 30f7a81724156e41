/**
 * The S3 wire calls through the AWS SDK for Java v2 ({@code s3://} store URIs). Nothing but
 * requests and answers: every rule lives in {@code remote.RemoteStore}.
 */
package dev.felix.offload.store.s3;
