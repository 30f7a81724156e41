/**
 * The offload pass: selects sealed segments, validates them, uploads them under
 * <code>&lt;node id&gt;/&lt;shard dir&gt;/&lt;base&gt;-&lt;segment&gt;.segment</code>, verifies what the store
 * holds, records them in the manifest and only then unlinks the local copy; and the remote read
 * path that serves offsets below the local base offset. Uses <code>local-log</code>,
 * <code>manifest</code> and <code>object-store</code>.
 */
package dev.felix.offload.tier;
