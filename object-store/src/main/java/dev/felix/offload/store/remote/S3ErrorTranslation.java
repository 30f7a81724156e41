package dev.felix.offload.store.remote;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.BucketMissingException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;

/**
 * Turns an S3 answer (status and error code) into the store's exception types. Shared by the SDK
 * and MinIO stores, which see the same S3 error codes.
 */
public final class S3ErrorTranslation {
    private static final Set<String> THROTTLING = Set.of("SlowDown", "Throttling", "ThrottlingException",
            "RequestLimitExceeded", "TooManyRequests", "TooManyRequestsException", "RequestThrottled");
    private static final Set<String> INTEGRITY = Set.of("BadDigest", "InvalidDigest", "XAmzContentChecksumMismatch",
            "XAmzContentSHA256Mismatch", "InvalidChecksum", "ChecksumMismatch");
    private static final Set<String> DENIED = Set.of("AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId",
            "InvalidToken", "ExpiredToken", "AllAccessDisabled");

    private S3ErrorTranslation() {}

    /**
     * The exception for an HTTP answer.
     *
     * @param operation what was attempted, e.g. "put"
     * @param key the store key (not the full bucket key), or null
     * @param status the HTTP status
     * @param code the S3 error code, or null (HEAD answers carry none)
     * @param detail the server's message, or null
     */
    public static StoreException fromAnswer(String operation, String key, int status, String code, String detail, Throwable cause) {
        String c = code == null ? "" : code;
        StoreAnswer answer = new StoreAnswer(status, c);
        boolean silent = c.isEmpty() && (detail == null || detail.isBlank());
        String what = operation + (key == null ? "" : " of key '" + key + "'") + " failed: " + answer
                + (detail == null || detail.isBlank() ? "" : " (" + detail + ")")
                // A server error with no S3 error in its body (S3Proxy's answer when a stray file breaks
                // its listing, say) leaves the cause in the server's log, not here.
                + (silent && status >= 500 ? "; the server gave no reason, its own log says why" : "");
        if (THROTTLING.contains(c) || status == 429 || (status == 503 && (c.isEmpty() || c.equals("ServiceUnavailable")))) {
            return new ThrottledException(what, key, answer, cause);
        }
        if (INTEGRITY.contains(c)) {
            return new IntegrityRejectedException(what, key, answer, cause);
        }
        if (c.equals("NoSuchBucket")) {
            // told apart from a missing key: "absent" would let a caller go on as if the object were gone
            return new BucketMissingException(what, key, answer, cause);
        }
        if (status == 404 || c.equals("NoSuchKey")) {
            return new ObjectNotFoundException(what, key, answer, cause);
        }
        if (status == 416 || c.equals("InvalidRange")) {
            return new InvalidRangeException(what, key, answer, cause);
        }
        // 304 too: S3Mock answers it to a multipart completion with If-None-Match over an existing key.
        // The stores send If-None-Match only on writes, so a 304 always means a create-only write's key exists.
        if (status == 412 || status == 304 || c.equals("PreconditionFailed") || c.equals("ConditionalRequestConflict")) {
            return new PreconditionFailedException(what, key, answer, cause);
        }
        if (status == 401 || status == 403 || DENIED.contains(c)) {
            return new AccessDeniedException(what + "; " + credentialsHint(c), key, answer, cause);
        }
        if (status == 408 || c.equals("RequestTimeout") || c.equals("InternalError") || (status >= 500 && status != 501)) {
            return new TransientStoreException(what, key, answer, cause);
        }
        return new StoreRejectedException(what, key, answer, cause);
    }

    /**
     * What an operator should look at for a refusal, by the server's code: the answer alone ("403
     * SignatureDoesNotMatch") names the symptom, not which setting is wrong.
     */
    static String credentialsHint(String code) {
        switch (code) {
            case "SignatureDoesNotMatch":
                return "the secret key does not belong to the access key (check AWS_SECRET_ACCESS_KEY or the profile)";
            case "InvalidAccessKeyId":
                return "the server knows no such access key (check AWS_ACCESS_KEY_ID or the profile, and the endpoint)";
            case "ExpiredToken":
            case "InvalidToken":
                return "the session token is expired or invalid (check AWS_SESSION_TOKEN or renew the role's credentials)";
            default:
                return "the credentials are not allowed this operation on this bucket and prefix (check the bucket policy"
                        + " and the key's permissions)";
        }
    }

    /**
     * An I/O-level failure: no answer, or a broken one. A client's failure to find any credentials
     * ({@link CredentialsUnavailableException} in the cause chain, put there by the wire's provider)
     * also arrives here; it is no I/O failure and retrying cannot mend it, so it is an access denial
     * that says where credentials are looked for.
     */
    public static StoreException fromIo(String operation, String key, Throwable cause) {
        String prefix = operation + (key == null ? "" : " of key '" + key + "'") + " failed: ";
        if (CredentialsUnavailableException.within(cause)) {
            return new AccessDeniedException(prefix + "no credentials found: set AWS_ACCESS_KEY_ID and"
                    + " AWS_SECRET_ACCESS_KEY, or a profile (AWS_PROFILE, ~/.aws/credentials), or run with an instance"
                    + " or container role", key, StoreAnswer.NONE, cause);
        }
        return new TransientStoreException(prefix + describe(cause), key, StoreAnswer.NONE, cause);
    }

    /**
     * The refusal of a request that carried a digest of its body (a {@code Content-MD5} or
     * {@code x-amz-checksum-crc32} header) as the store's type: a 400 whose code names no reason of its own
     * (none, or the generic {@code BadRequest}) is an integrity refusal. S3Mock refuses a wrong digest so,
     * where S3, Ceph RGW, MinIO and S3Proxy answer a code that says it ({@code BadDigest}, a checksum
     * mismatch), which {@link #fromAnswer} reads already. Decided on the request and the answer's status
     * and code, never on the server's message; a request without a digest gets no such reading.
     */
    static StoreException ofBodyDigestRequest(StoreException refused) {
        StoreAnswer answer = refused.answer();
        boolean unexplained400 = answer.httpStatus() == 400
                && (answer.errorCode().isEmpty() || answer.errorCode().equals("BadRequest"));
        if (!(refused instanceof StoreRejectedException) || !unexplained400) {
            return refused;
        }
        return new IntegrityRejectedException(refused.getMessage(), refused.key().orElse(null), answer,
                refused.getCause());
    }

    static String describe(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root
                && (root instanceof UncheckedIOException || root.getMessage() == null)) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    static boolean isIo(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IOException) {
                return true;
            }
        }
        return false;
    }
}
