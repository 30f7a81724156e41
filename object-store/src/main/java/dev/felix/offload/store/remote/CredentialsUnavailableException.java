package dev.felix.offload.store.remote;

/**
 * The client's credentials provider gave no credentials (none set anywhere it looks, or a source it
 * looks at failed), so a request was never signed nor sent. Each wire wraps the provider it hands its
 * client so that such a failure carries this type, whatever the client library calls it; the
 * translation ({@link S3ErrorTranslation#fromIo}) finds it in the cause chain and makes it an access
 * denial saying where credentials are looked for. Retrying cannot mend it.
 */
public final class CredentialsUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param cause what the client's provider threw */
    public CredentialsUnavailableException(Throwable cause) {
        super("the credentials provider gave no credentials: " + cause.getMessage(), cause);
    }

    /** True when {@code t} or one of its causes is this type. */
    public static boolean within(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof CredentialsUnavailableException) {
                return true;
            }
        }
        return false;
    }
}
