package dev.felix.offload.store;

/** The operation needs something this store (or the server behind it) cannot do, e.g. a create-only put on a server that ignores `If-None-Match`. See {@link ObjectStore#capabilities()}. */
public class CapabilityMissingException extends StoreException {
    private static final long serialVersionUID = 1L;

    public CapabilityMissingException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
