package dev.felix.offload.store.remote;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a remote store takes its credentials from. Never from a command line: either the AWS
 * default provider chain, the environment ({@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY},
 * optional {@code AWS_SESSION_TOKEN}), or keys an embedding program passes in code.
 * {@link #toString()} never shows a secret, nor the access key.
 */
public final class Credentials {
    public enum Source {
        /** The AWS SDK's default chain (environment, system properties, profile files, container and instance roles). */
        DEFAULT_CHAIN,
        /** Environment variables only. */
        ENVIRONMENT,
        /** Keys given in code. */
        STATIC
    }

    private static final Credentials DEFAULT_CHAIN = new Credentials(Source.DEFAULT_CHAIN, null, null);
    private static final Credentials ENVIRONMENT = new Credentials(Source.ENVIRONMENT, null, null);

    private final Source source;
    private final String accessKey;
    private final String secretKey;

    private Credentials(Source source, String accessKey, String secretKey) {
        this.source = source;
        this.accessKey = accessKey;
        this.secretKey = secretKey;
    }

    public static Credentials defaultChain() {
        return DEFAULT_CHAIN;
    }

    public static Credentials environment() {
        return ENVIRONMENT;
    }

    public static Credentials ofKeys(String accessKey, String secretKey) {
        Objects.requireNonNull(accessKey, "access key");
        Objects.requireNonNull(secretKey, "secret key");
        if (accessKey.isBlank() || secretKey.isBlank()) {
            throw new IllegalArgumentException("static credentials need a non-blank access key and secret key");
        }
        return new Credentials(Source.STATIC, accessKey, secretKey);
    }

    public Source source() {
        return source;
    }

    /** The access key of static credentials. */
    public Optional<String> accessKey() {
        return Optional.ofNullable(accessKey);
    }

    /** The secret key of static credentials; hand it only to a client, never to a log. */
    public Optional<String> secretKey() {
        return Optional.ofNullable(secretKey);
    }

    @Override
    public String toString() {
        switch (source) {
            case DEFAULT_CHAIN:
                return "credentials from the default provider chain";
            case ENVIRONMENT:
                return "credentials from the environment";
            default:
                return "static credentials (redacted)";
        }
    }
}
