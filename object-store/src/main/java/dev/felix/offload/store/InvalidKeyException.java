package dev.felix.offload.store;

/** A key (or list prefix) that no store accepts: empty, too long, absolute, holding `.` or `..` segments, empty segments, a backslash, NUL or another control character, or a reserved name. The message names the key and the rule it breaks. */
public class InvalidKeyException extends StoreException {
    private static final long serialVersionUID = 1L;

    public InvalidKeyException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
