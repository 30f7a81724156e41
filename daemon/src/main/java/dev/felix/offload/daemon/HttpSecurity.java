package dev.felix.offload.daemon;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Who may use the daemon's HTTP endpoint and over what: the {@code http.auth.*} and {@code http.tls.*}
 * settings, and the optional second listener ({@code http.status.*}) that serves only {@code /metrics},
 * {@code /health} and {@code /health/live}, in plain HTTP and without authentication.
 *
 * <p>{@link AccessPolicy} applies them to each request; the files they name are read when the daemon
 * starts (a file that cannot be used refuses the start, naming the setting) and read again when they
 * change, so tokens and certificates rotate without a restart.
 *
 * @param tokenFile            bearer tokens, one a line
 * @param scope                what needs authentication on the main listener
 * @param allowUnauthenticated the operator's explicit word that a non-loopback bind may serve data to anyone
 * @param tlsCertificate       PEM certificate chain, the server's own first
 * @param tlsKey               PEM private key of that certificate (PKCS#8, or PKCS#1 for RSA)
 * @param clientCa             PEM certificates of the CAs whose client certificates authenticate
 * @param statusBind           the second listener's address (default: {@code http.bind})
 * @param statusPort           the second listener's port, when there is one
 */
public record HttpSecurity(Optional<Path> tokenFile, Scope scope, boolean allowUnauthenticated,
                           Optional<Path> tlsCertificate, Optional<Path> tlsKey, Optional<Path> clientCa,
                           Optional<String> statusBind, OptionalInt statusPort) {

    public static final String TOKEN_FILE = "http.auth.token-file";
    public static final String SCOPE = "http.auth.scope";
    public static final String ALLOW_UNAUTHENTICATED = "http.auth.allow-unauthenticated";
    public static final String TLS_CERTIFICATE = "http.tls.certificate";
    public static final String TLS_KEY = "http.tls.key";
    public static final String TLS_CLIENT_CA = "http.tls.client-ca";
    public static final String STATUS_BIND = "http.status.bind";
    public static final String STATUS_PORT = "http.status.port";

    static final List<String> KEYS = List.of(TOKEN_FILE, SCOPE, ALLOW_UNAUTHENTICATED, TLS_CERTIFICATE, TLS_KEY,
            TLS_CLIENT_CA, STATUS_BIND, STATUS_PORT);

    /** The paths that report on the daemon rather than serve data: open under {@link Scope#DATA}. */
    static final List<String> STATUS_PATHS = List.of("/metrics", "/health", "/health/", "/health/live");

    /** What needs authentication on the main listener. */
    public enum Scope {
        /** Everything but {@link #STATUS_PATHS}: {@code /read}, {@code /shards} and any path added later. */
        DATA,
        /** Every path, {@code /metrics} and {@code /health} included. */
        ALL;

        static Optional<Scope> parse(String text) {
            return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "data" -> Optional.of(DATA);
                case "all" -> Optional.of(ALL);
                default -> Optional.empty();
            };
        }
    }

    /** Nothing configured: plain HTTP, nothing asked of a client. */
    static HttpSecurity none() {
        return new HttpSecurity(Optional.empty(), Scope.DATA, false, Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), OptionalInt.empty());
    }

    /** Whether anything authenticates a client: a token file, or client certificates. */
    public boolean authenticates() {
        return tokenFile.isPresent() || clientCa.isPresent();
    }

    public boolean tls() {
        return tlsCertificate.isPresent();
    }

    /** {@code https} or {@code http}, for the main listener. */
    public String scheme() {
        return tls() ? "https" : "http";
    }

    /** Whether {@code bind} is an address only this machine reaches (127.0.0.0/8, ::1, or a name for them). */
    static boolean loopback(String bind) {
        try {
            return InetAddress.getByName(bind).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
