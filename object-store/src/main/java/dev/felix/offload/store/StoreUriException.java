package dev.felix.offload.store;

/**
 * A store URI that cannot be used; {@link #part()} names the part that is wrong (such as
 * {@code scheme}, {@code bucket}, {@code prefix}, {@code path} or a parameter name like
 * {@code endpoint}), and the message says why.
 */
public final class StoreUriException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String part;

    public StoreUriException(String part, String message, Throwable cause) {
        super("store URI " + part + ": " + message, cause);
        this.part = part;
    }

    public String part() {
        return part;
    }
}
