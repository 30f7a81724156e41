package dev.felix.offload.store;

/** The credentials were refused or lack permission: HTTP 403 (`AccessDenied`, `SignatureDoesNotMatch`, `InvalidAccessKeyId`) or 401. */
public class AccessDeniedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public AccessDeniedException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
