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

    /**
     * The same failure for a client library that unwraps one cause too many: the MinIO client throws
     * the cause of a failed call's cause, which would drop this type and keep only what the provider
     * threw. Here what it threw is kept as a suppressed exception, for a debug trace, and not as the cause.
     */
    public static CredentialsUnavailableException causeless(Throwable providerFailure) {
        CredentialsUnavailableException e = new CredentialsUnavailableException(providerFailure.getMessage());
        e.addSuppressed(providerFailure);
        return e;
    }

    private CredentialsUnavailableException(String providerMessage) {
        super("the credentials provider gave no credentials: " + providerMessage);
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
