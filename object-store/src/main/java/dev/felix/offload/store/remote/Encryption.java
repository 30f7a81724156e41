package dev.felix.offload.store.remote;

import java.util.Optional;

/**
 * Server-side encryption asked for on every upload (setting {@code sse}).
 *
 * @param kind none, S3-managed keys ({@code AES256}) or KMS ({@code aws:kms})
 * @param kmsKeyId the KMS key id for {@link Kind#KMS}; empty means the account's default KMS key
 */
public record Encryption(Kind kind, Optional<String> kmsKeyId) {
    public enum Kind {
        NONE,
        S3,
        KMS
    }

    public static final Encryption NONE = new Encryption(Kind.NONE, Optional.empty());

    public Encryption {
        if (kind != Kind.KMS && kmsKeyId.isPresent()) {
            throw new IllegalArgumentException("setting 'sse-kms-key-id' needs setting 'sse' to be kms");
        }
        if (kmsKeyId.isPresent() && kmsKeyId.get().isBlank()) {
            throw new IllegalArgumentException("setting 'sse-kms-key-id' must not be blank");
        }
    }

    public static Encryption s3Managed() {
        return new Encryption(Kind.S3, Optional.empty());
    }

    public static Encryption kms(String keyId) {
        return new Encryption(Kind.KMS, Optional.ofNullable(keyId));
    }

    /** Parses {@code none}, {@code s3} (or {@code AES256}) or {@code kms} (or {@code aws:kms}). */
    public static Encryption parse(String value, String kmsKeyId) {
        String v = value == null ? "none" : value.trim().toLowerCase(java.util.Locale.ROOT);
        switch (v) {
            case "none":
            case "":
                return kmsKeyId == null ? NONE : new Encryption(Kind.NONE, Optional.of(kmsKeyId));
            case "s3":
            case "aes256":
                return kmsKeyId == null ? s3Managed() : new Encryption(Kind.S3, Optional.of(kmsKeyId));
            case "kms":
            case "aws:kms":
                return kms(kmsKeyId);
            default:
                throw new IllegalArgumentException("setting 'sse' must be none, s3 or kms, not '" + value + "'");
        }
    }
}
