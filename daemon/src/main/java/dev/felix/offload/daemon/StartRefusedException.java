package dev.felix.offload.daemon;

/**
 * The daemon will not start with what it was given: no data directory, another daemon on the root,
 * a node id that does not validate, another root's node claim, a port it cannot listen on. The
 * message names the file and setting; the command reports it as a usage error (exit 2).
 */
public final class StartRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StartRefusedException(String message) {
        super(message);
    }
}
