package dev.felix.offload.store;

import java.time.Instant;

/**
 * Multipart uploads that were begun and never completed or aborted: a process killed in the middle
 * of a large put leaves one behind, and the store keeps (and bills) its parts until it is aborted.
 * Stores with multipart uploads implement this role; the others have nothing to clean up.
 *
 * <p>Contract: only uploads whose keys start with {@code prefix} and that were begun before
 * {@code startedBefore} are aborted, so a put still running in another process is left alone when
 * the caller chooses the instant with a margin. Aborting an upload that finished meanwhile succeeds.
 */
public interface IncompleteUploads {

    /** Aborts the incomplete uploads under {@code prefix} begun before {@code startedBefore}; answers their keys. */
    java.util.List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException;
}
