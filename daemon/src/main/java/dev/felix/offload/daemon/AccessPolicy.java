package dev.felix.offload.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsExchange;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Decides, before anything else is done for a request, whether the client may have it.
 *
 * <p>Paths that report on the daemon ({@code /metrics}, {@code /health}, {@code /health/live}) are open
 * unless {@code http.auth.scope} is {@code all}; every other path, {@code /read} and {@code /shards}
 * and any added later, needs a credential whenever one is configured: a bearer token from
 * {@code http.auth.token-file}, or a client certificate the TLS handshake verified against
 * {@code http.tls.client-ca} (either one is enough). With nothing configured every request is let
 * through, which {@link DaemonConfig} allows only on a loopback bind or when
 * {@code http.auth.allow-unauthenticated} says so.
 *
 * <p>No credential: 401 with {@code WWW-Authenticate: Bearer}. A token that is not one of the file's:
 * 403. Both are counted ({@code felix_http_refused_total}) and answered without reading anything.
 */
final class AccessPolicy {

    /** A refusal: the status, the stable error name and what to tell the client. */
    record Refusal(int status, String error, String message) {
    }

    private final HttpSecurity.Scope scope;
    private final Optional<TokenFile> tokens;
    private final boolean clientCertificates;
    private final AtomicLong unauthorized = new AtomicLong();
    private final AtomicLong forbidden = new AtomicLong();

    private AccessPolicy(HttpSecurity.Scope scope, Optional<TokenFile> tokens, boolean clientCertificates) {
        this.scope = scope;
        this.tokens = tokens;
        this.clientCertificates = clientCertificates;
    }

    /** The policy of the main listener; reads the token file (a file without a token refuses the start). */
    static AccessPolicy of(HttpSecurity s) {
        return new AccessPolicy(s.scope(), s.tokenFile().map(TokenFile::open), s.clientCa().isPresent());
    }

    /** The second listener's: it serves only the status paths, to anyone. */
    static AccessPolicy open() {
        return new AccessPolicy(HttpSecurity.Scope.DATA, Optional.empty(), false);
    }

    boolean requiresCredentials() {
        return tokens.isPresent() || clientCertificates;
    }

    /** Empty when {@code ex} may be answered; else why not. */
    Optional<Refusal> check(HttpExchange ex) {
        if (!requiresCredentials()) {
            return Optional.empty();
        }
        String path = ex.getRequestURI().getPath();
        if (scope == HttpSecurity.Scope.DATA && HttpSecurity.STATUS_PATHS.contains(path)) {
            return Optional.empty();
        }
        if (clientCertificates && verifiedClient(ex)) {
            return Optional.empty();
        }
        String authorization = ex.getRequestHeaders().getFirst("Authorization");
        String what = tokens.isPresent() && clientCertificates ? "a bearer token (Authorization: Bearer TOKEN) or a client certificate"
                : tokens.isPresent() ? "a bearer token (Authorization: Bearer TOKEN)" : "a client certificate";
        if (authorization == null || tokens.isEmpty()) {
            unauthorized.incrementAndGet();
            return Optional.of(new Refusal(401, "unauthorized", path + " needs " + what));
        }
        if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            unauthorized.incrementAndGet();
            return Optional.of(new Refusal(401, "unauthorized", "the Authorization header is not a bearer token; " + path
                    + " needs " + what));
        }
        if (!tokens.get().accepts(authorization.substring(7).strip())) {
            forbidden.incrementAndGet();
            return Optional.of(new Refusal(403, "forbidden", "the bearer token is not accepted"));
        }
        return Optional.empty();
    }

    private static boolean verifiedClient(HttpExchange ex) {
        if (!(ex instanceof HttpsExchange https)) {
            return false;
        }
        try {
            return https.getSSLSession().getPeerCertificates().length > 0;
        } catch (SSLPeerUnverifiedException e) {
            return false;
        }
    }

    long unauthorized() {
        return unauthorized.get();
    }

    long forbidden() {
        return forbidden.get();
    }
}
