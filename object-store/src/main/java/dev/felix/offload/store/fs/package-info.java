/**
 * The filesystem store ({@code file://} store URIs, the embedded default): objects as files under
 * a directory, written through a temporary and an atomic move (a no-replace link for create-only
 * puts), their CRC32 and metadata in extended attributes.
 */
package dev.felix.offload.store.fs;
