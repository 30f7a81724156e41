package dev.felix.offload.store;

import java.util.List;

/**
 * A store that sends requests to a server and can be told to send no more: what a process does
 * when it is asked to stop, so that nothing it begins after the signal is left half-done in the
 * store. Stores without a server (the filesystem store) have nothing to gate.
 */
public interface RequestGate {
    /**
     * From now on no request starts: a call that would send one, a retry or the next part of a
     * multipart upload included, fails with {@link StoreStoppedException} without sending it.
     * Requests already sent go on. The one request still sent is the abort of a multipart upload
     * this store began, so that an upload the stop cut short is not left open.
     */
    void stopRequests();

    /**
     * Aborts the multipart uploads this store began and has neither completed nor aborted yet (one
     * abort request each, sent even after {@link #stopRequests()}), for a stop whose uploads did not
     * end by themselves in time. Parts still travelling then fail; the server keeps none of them.
     *
     * @return the keys of the uploads aborted
     */
    List<String> abortOpenUploads();
}
