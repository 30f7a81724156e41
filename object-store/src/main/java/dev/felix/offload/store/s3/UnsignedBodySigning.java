package dev.felix.offload.store.s3;

import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.http.auth.aws.scheme.AwsV4AuthScheme;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.identity.spi.IdentityProviders;

/**
 * SigV4 that signs every header but leaves the body out ({@code x-amz-content-sha256:
 * UNSIGNED-PAYLOAD}), also over plain HTTP, where the SDK's own signer always hashes a body. Used
 * only for upload requests carrying a {@code Content-MD5} or {@code x-amz-checksum-crc32} that the
 * server was seen to check: that signed header binds the body instead, without a second read of it. (Public for the benchmark's HTTP-client
 * section, which puts it beside the SDK's own signing.)
 */
public final class UnsignedBodySigning implements AwsV4AuthScheme {
    private final AwsV4AuthScheme standard = AwsV4AuthScheme.create();
    private final AwsV4HttpSigner signer = new HeadersOnly(standard.signer());

    @Override
    public String schemeId() {
        return SCHEME_ID;
    }

    @Override
    public IdentityProvider<AwsCredentialsIdentity> identityProvider(IdentityProviders providers) {
        return standard.identityProvider(providers);
    }

    @Override
    public AwsV4HttpSigner signer() {
        return signer;
    }

    /** Signs the request as if it had no body (so unsigned-payload), then hands the body back. */
    private static final class HeadersOnly implements AwsV4HttpSigner {
        private final AwsV4HttpSigner standard;

        HeadersOnly(AwsV4HttpSigner standard) {
            this.standard = standard;
        }

        @Override
        public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
            SignedRequest signed = standard.sign(request.toBuilder().payload(null)
                    .putProperty(AwsV4FamilyHttpSigner.PAYLOAD_SIGNING_ENABLED, false).build());
            return signed.toBuilder().payload(request.payload().orElse(null)).build();
        }

        @Override
        public CompletableFuture<AsyncSignedRequest> signAsync(AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
            return standard.signAsync(request); // the store's client is synchronous; nothing asynchronous is signed here
        }
    }
}
