/**
 * End-to-end tests that run the <code>felix-offload</code> command and its passes against real
 * S3-compatible servers started as separate processes (and, where a Docker engine exists, MinIO and
 * LocalStack through Testcontainers). Nothing depends on this module.
 */
package dev.felix.offload.it;
