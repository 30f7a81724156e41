package dev.felix.offload.store;

/**
 * The server's TLS certificate was not accepted: signed by no CA the client trusts, or naming another
 * host. A refusal, never retried: no second attempt trusts the certificate any more than the first.
 * The message names the endpoint and how to trust the server's CA.
 */
public class UntrustedServerException extends StoreRejectedException {
    private static final long serialVersionUID = 1L;

    public UntrustedServerException(String message, String key, Throwable cause) {
        super(message, key, null, cause);
    }
}
