package dev.felix.offload.daemon;

/**
 * A configuration file that cannot be used: a key nobody knows, a value of the wrong form, a
 * required key missing. The message names the file, the key and what was expected; it never
 * repeats a value that could be a secret (no key takes one).
 */
public final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String key;

    ConfigException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The key the problem is about, or null when it is about the whole file. */
    String key() {
        return key;
    }
}
