package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class S3ErrorTranslationTest {
    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource(nullValues = "-", value = {
        "404, NoSuchKey, ObjectNotFoundException",
        "404, NoSuchBucket, BucketMissingException",
        "404, -, ObjectNotFoundException",
        "416, InvalidRange, InvalidRangeException",
        "412, PreconditionFailed, PreconditionFailedException",
        "409, ConditionalRequestConflict, PreconditionFailedException",
        "503, SlowDown, ThrottledException",
        "503, -, ThrottledException",
        "429, -, ThrottledException",
        "400, RequestLimitExceeded, ThrottledException",
        "403, AccessDenied, AccessDeniedException",
        "403, SignatureDoesNotMatch, AccessDeniedException",
        "401, -, AccessDeniedException",
        "400, BadDigest, IntegrityRejectedException",
        "400, InvalidDigest, IntegrityRejectedException",
        "400, XAmzContentChecksumMismatch, IntegrityRejectedException",
        "500, InternalError, TransientStoreException",
        "502, -, TransientStoreException",
        "504, -, TransientStoreException",
        "400, RequestTimeout, TransientStoreException",
        "501, NotImplemented, StoreRejectedException",
        "400, InvalidArgument, StoreRejectedException",
    })
    void answersMapToTypes(int status, String code, String type) {
        StoreException e = S3ErrorTranslation.fromAnswer("get", "k", status, code, null, null);
        assertThat(e.getClass().getSimpleName()).isEqualTo(type);
        assertThat(e.key()).hasValue("k");
        assertThat(e.answer().httpStatus()).isEqualTo(status);
        assertThat(e.isRetryable()).isEqualTo(e instanceof ThrottledException || e instanceof TransientStoreException);
    }

    @org.junit.jupiter.api.Test
    void aServerErrorWithoutAReasonSaysWhereTheReasonIs() {
        String hint = "; the server gave no reason, its own log says why";
        assertThat(S3ErrorTranslation.fromAnswer("list of prefix 'node-a/'", null, 500, null, null, null))
                .isInstanceOf(TransientStoreException.class)
                .hasMessage("list of prefix 'node-a/' failed: HTTP 500" + hint);
        assertThat(S3ErrorTranslation.fromAnswer("get", "k", 500, "InternalError", null, null).getMessage()).doesNotContain(hint);
        assertThat(S3ErrorTranslation.fromAnswer("get", "k", 502, null, "bad gateway", null).getMessage())
                .isEqualTo("get of key 'k' failed: HTTP 502 (bad gateway)");
        assertThat(S3ErrorTranslation.fromAnswer("get", "k", 404, null, null, null).getMessage()).doesNotContain(hint);
    }

    @org.junit.jupiter.api.Test
    void aBareBadRequestToARequestCarryingADigestIsAnIntegrityRejection() {
        // S3Mock answers a wrong x-amz-checksum-crc32 or Content-MD5 with a plain 400 BadRequest: told as an
        // integrity refusal by the request having carried a digest, whatever the server's message says
        StoreException plain = S3ErrorTranslation.fromAnswer("put", "k", 400, "BadRequest", "anything at all", null);
        assertThat(plain).isInstanceOf(StoreRejectedException.class);
        StoreException read = S3ErrorTranslation.ofBodyDigestRequest(plain);
        assertThat(read).isInstanceOf(IntegrityRejectedException.class).hasMessage(plain.getMessage());
        assertThat(read.key()).hasValue("k");
        assertThat(read.answer()).isEqualTo(plain.answer());
        assertThat(S3ErrorTranslation.ofBodyDigestRequest(
                S3ErrorTranslation.fromAnswer("put", "k", 400, null, null, null))).isInstanceOf(IntegrityRejectedException.class);
        // S3Proxy and RGW say so by their code, digest or not
        assertThat(S3ErrorTranslation.fromAnswer("put", "k", 400, "BadDigest", null, null))
                .isInstanceOf(IntegrityRejectedException.class);
        // a 400 with a reason of its own stays what it is, as does any other answer
        for (StoreException other : new StoreException[] {
            S3ErrorTranslation.fromAnswer("put", "k", 400, "InvalidArgument", null, null),
            S3ErrorTranslation.fromAnswer("put", "k", 400, "RequestTimeout", null, null),
            S3ErrorTranslation.fromAnswer("put", "k", 403, "AccessDenied", null, null),
            S3ErrorTranslation.fromAnswer("put", "k", 404, "NoSuchBucket", null, null),
            S3ErrorTranslation.fromAnswer("put", "k", 500, "InternalError", null, null)}) {
            assertThat(S3ErrorTranslation.ofBodyDigestRequest(other)).as(other.getMessage()).isSameAs(other);
        }
        assertThat(S3ErrorTranslation.fromIo("get", "k", new java.io.IOException("reset"))).isInstanceOf(TransientStoreException.class);
    }

    @org.junit.jupiter.api.Test
    void aMessageNamingAChecksumDecidesNothing() {
        // the decision is on the request and the answer's code: the server's words alone make no integrity refusal
        assertThat(S3ErrorTranslation.fromAnswer("put", "k", 400, "BadRequest", "Value for x-amz-checksum-crc32 header is invalid.", null))
                .isInstanceOf(StoreRejectedException.class);
        assertThat(S3ErrorTranslation.fromAnswer("put", "k", 400, "BadRequest", "Content-MD5 does not match object md5", null))
                .isInstanceOf(StoreRejectedException.class);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "SignatureDoesNotMatch, AWS_SECRET_ACCESS_KEY",
        "InvalidAccessKeyId, AWS_ACCESS_KEY_ID",
        "ExpiredToken, AWS_SESSION_TOKEN",
        "AccessDenied, bucket policy",
    })
    void aRefusalSaysWhichSettingToCheck(String code, String setting) {
        StoreException e = S3ErrorTranslation.fromAnswer("put", "k", 403, code, null, null);
        assertThat(e).isInstanceOf(AccessDeniedException.class);
        assertThat(e.getMessage()).startsWith("put of key 'k' failed: HTTP 403 " + code).contains(setting);
    }

    @org.junit.jupiter.api.Test
    void noCredentialsAnywhereIsAnAccessDenialNamingWhereTheyAreLookedFor() {
        // as the SDK's wire throws it: an SDK client exception whose cause is our type
        var sdk = software.amazon.awssdk.core.exception.SdkClientException.builder()
                .message("Unable to load credentials from any of the providers in the chain AwsCredentialsProviderChain(...)")
                .cause(new CredentialsUnavailableException(new IllegalStateException("no keys"))).build();
        StoreException e = S3ErrorTranslation.fromIo("put", "k", sdk);
        assertThat(e).isInstanceOf(AccessDeniedException.class);
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getMessage()).isEqualTo("put of key 'k' failed: no credentials found: set AWS_ACCESS_KEY_ID and"
                + " AWS_SECRET_ACCESS_KEY, or a profile (AWS_PROFILE, ~/.aws/credentials), or run with an instance or"
                + " container role");
    }

    @org.junit.jupiter.api.Test
    void aMessageAboutCredentialsDecidesNothing() {
        // the decision is on the type: the same words without it are an I/O failure like any other
        var worded = software.amazon.awssdk.core.exception.SdkClientException.create(
                "Unable to load credentials from any of the providers in the chain AwsCredentialsProviderChain(...)");
        assertThat(S3ErrorTranslation.fromIo("put", "k", worded)).isInstanceOf(TransientStoreException.class);
    }
}
