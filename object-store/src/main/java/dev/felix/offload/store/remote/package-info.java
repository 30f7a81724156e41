/**
 * The S3-compatible store, written once: {@link dev.felix.offload.store.remote.RemoteStore} over
 * the {@link dev.felix.offload.store.remote.S3Wire} calls of one HTTP client, each sent through
 * {@code WireCalls} (retries, the stop, errors into the typed tree). Beside it, the parts
 * that do not depend on the client: the server probe and what it found
 * ({@code ServerProbe}, which probes on first need and decides each request, and {@code ServerTraits}), multipart uploads ({@code MultipartUploads},
 * {@code PartedUpload}) and their part CRC32s, answer checks, the error translation over S3's HTTP answers, and the settings.
 */
package dev.felix.offload.store.remote;
