package dev.felix.offload.store;

/**
 * What a remote store answered, kept on a {@link StoreException} for diagnosis: the HTTP status
 * and the store's error code (for example {@code NoSuchKey} or {@code SlowDown}). Never holds
 * credentials or signatures.
 *
 * @param httpStatus the HTTP status, or 0 when no HTTP answer was received
 * @param errorCode the store's error code, or an empty string when it gave none
 */
public record StoreAnswer(int httpStatus, String errorCode) {
    public static final StoreAnswer NONE = new StoreAnswer(0, "");

    public StoreAnswer {
        errorCode = errorCode == null ? "" : errorCode;
    }

    @Override
    public String toString() {
        if (httpStatus == 0 && errorCode.isEmpty()) {
            return "no answer";
        }
        return "HTTP " + httpStatus + (errorCode.isEmpty() ? "" : " " + errorCode);
    }
}
