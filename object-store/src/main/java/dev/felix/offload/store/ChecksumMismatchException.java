package dev.felix.offload.store;

/** Bytes received from the store do not match the CRC32 the caller expected (or the store declared). Retryable because damage in transit goes away on a second read; thrown once the retry budget is spent, in which case the stored object itself may be damaged. The damaged bytes are never handed to the caller. */
public class ChecksumMismatchException extends StoreException {
    private static final long serialVersionUID = 1L;

    public ChecksumMismatchException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

    @Override
    public boolean isRetryable() {
        return true;
    }
}
