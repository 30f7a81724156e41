package dev.felix.offload.restore;

/**
 * An object a restore read and refuses: its bytes are not the whole segment its key names (they do
 * not scan clean to their last byte, hold no record, or begin at another offset). The message names
 * the key and the byte; the restore refuses with it.
 */
final class ObjectRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    ObjectRefusedException(String message) {
        super(message);
    }
}
