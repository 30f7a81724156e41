package dev.felix.offload.daemon;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The endpoint's TLS from PEM files ({@code http.tls.certificate}, {@code http.tls.key}, and
 * {@code http.tls.client-ca} for client certificates), as an {@link SSLContext} whose certificate and
 * client CAs follow the files: they are looked at (one {@code stat} each) at most once a second, during
 * handshakes, and a changed set is loaded for the handshakes after it. A renewed certificate (cert-manager,
 * an ACME client) therefore needs no restart. A set that does not load (the key written, the certificate
 * not yet) keeps the previous one in use, with a warning, until it does.
 *
 * <p>Client certificates are checked as the JDK's PKIX trust manager checks them: a chain to one of the
 * CAs, every certificate within its validity period, the client-auth key usage where one is given. An
 * expired certificate or one from another CA ends the handshake.
 */
final class TlsFiles {

    private static final Logger LOG = LoggerFactory.getLogger(TlsFiles.class);
    private static final long RECHECK_NANOS = 1_000_000_000L;

    private final Path certificate;
    private final Path key;
    private final Optional<Path> clientCa;

    private record Loaded(List<Object> stamps, X509KeyManager keys, Optional<X509TrustManager> trust, int generation) {
    }

    private volatile Loaded loaded;
    private volatile long checkedNanos;
    /** The previous set, for a handshake that chose its alias just before a reload. */
    private volatile Loaded previous;

    private TlsFiles(Path certificate, Path key, Optional<Path> clientCa) {
        this.certificate = certificate;
        this.key = key;
        this.clientCa = clientCa;
    }

    /** Loads the files; any that cannot be used refuses the start, naming its setting. */
    static TlsFiles open(HttpSecurity s) {
        TlsFiles tls = new TlsFiles(s.tlsCertificate().orElseThrow(), s.tlsKey().orElseThrow(), s.clientCa());
        try {
            tls.loaded = tls.load(0);
        } catch (SettingProblem e) {
            throw new StartRefusedException(e.getMessage());
        }
        tls.checkedNanos = System.nanoTime();
        TokenFile.warnIfOthersMayRead(HttpSecurity.TLS_KEY, tls.key);
        X509Certificate own = tls.loaded.keys().getCertificateChain(alias(0))[0];
        LOG.info("TLS with {} (valid until {}){}", own.getSubjectX500Principal().getName(), own.getNotAfter().toInstant(),
                s.clientCa().map(ca -> "; client certificates checked against " + ca).orElse(""));
        return tls;
    }

    SSLContext context() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new javax.net.ssl.KeyManager[] {new KeyManager()},
                    clientCa.isPresent() ? new javax.net.ssl.TrustManager[] {new TrustManager()} : null, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK's TLS cannot be set up: " + e, e);
        }
    }

    boolean checksClients() {
        return clientCa.isPresent();
    }

    private static final class SettingProblem extends Exception {
        private static final long serialVersionUID = 1L;

        SettingProblem(String setting, String message) {
            super(setting + ": " + message);
        }
    }

    private static String alias(int generation) {
        return "felix-" + generation;
    }

    private static Object stamp(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return List.of(a.lastModifiedTime(), a.size(), String.valueOf(a.fileKey()));
        } catch (IOException e) {
            return "unreadable";
        }
    }

    private List<Object> stamps() {
        List<Object> out = new ArrayList<>(List.of(stamp(certificate), stamp(key)));
        clientCa.ifPresent(ca -> out.add(stamp(ca)));
        return out;
    }

    private Loaded load(int generation) throws SettingProblem {
        List<Object> stamps = stamps();
        List<X509Certificate> chain;
        PrivateKey privateKey;
        try {
            chain = PemFiles.certificates(certificate);
        } catch (IOException | IllegalArgumentException e) {
            throw new SettingProblem(HttpSecurity.TLS_CERTIFICATE, describe(certificate, e));
        }
        try {
            privateKey = PemFiles.privateKey(key);
            PemFiles.requireMatch(privateKey, chain.get(0), key, certificate);
        } catch (IOException | IllegalArgumentException e) {
            throw new SettingProblem(HttpSecurity.TLS_KEY, describe(key, e));
        }
        X509KeyManager keys;
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            char[] password = new char[0];
            store.setKeyEntry(alias(generation), privateKey, password, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(store, password);
            keys = (X509KeyManager) factory.getKeyManagers()[0];
        } catch (GeneralSecurityException | IOException e) {
            throw new SettingProblem(HttpSecurity.TLS_KEY, key + ": the JDK refuses the key with its certificate: " + e.getMessage());
        }
        Optional<X509TrustManager> trust = Optional.empty();
        if (clientCa.isPresent()) {
            Path ca = clientCa.get();
            try {
                KeyStore store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                int i = 0;
                for (X509Certificate c : PemFiles.certificates(ca)) {
                    store.setCertificateEntry("ca-" + i++, c);
                }
                TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                factory.init(store);
                trust = Optional.of((X509TrustManager) factory.getTrustManagers()[0]);
            } catch (IOException | IllegalArgumentException e) {
                throw new SettingProblem(HttpSecurity.TLS_CLIENT_CA, describe(ca, e));
            } catch (GeneralSecurityException e) {
                throw new SettingProblem(HttpSecurity.TLS_CLIENT_CA, ca + ": " + e.getMessage());
            }
        }
        return new Loaded(stamps, keys, trust, generation);
    }

    private static String describe(Path file, Exception e) {
        return e instanceof IOException io ? "cannot read " + file + " (" + dev.felix.offload.log.IoProblem.describe(io) + ")"
                : e.getMessage();
    }

    /** The set in use, loaded again first when a file changed (looked at once a second at most). */
    private Loaded current() {
        long now = System.nanoTime();
        if (now - checkedNanos < RECHECK_NANOS) {
            return loaded;
        }
        synchronized (this) {
            if (now - checkedNanos >= RECHECK_NANOS) {
                checkedNanos = now;
                Loaded in = loaded;
                if (!stamps().equals(in.stamps())) {
                    try {
                        Loaded next = load(in.generation() + 1);
                        previous = in;
                        loaded = next;
                        LOG.info("TLS files changed; new handshakes use them ({})",
                                next.keys().getCertificateChain(alias(next.generation()))[0].getSubjectX500Principal().getName());
                    } catch (SettingProblem e) {
                        LOG.warn("TLS files changed but cannot be used yet, the previous ones stay in use: {}", e.getMessage());
                        loaded = new Loaded(stamps(), in.keys(), in.trust(), in.generation());
                    }
                }
            }
            return loaded;
        }
    }

    private X509KeyManager keysFor(String alias) {
        Loaded now = loaded;
        Loaded before = previous;
        return before != null && alias(before.generation()).equals(alias) ? before.keys() : now.keys();
    }

    /** Chooses the current certificate's alias; answers its chain and key by the generation the alias names. */
    private final class KeyManager extends X509ExtendedKeyManager {
        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return current().keys().chooseServerAlias(keyType, issuers, null);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return current().keys().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return current().keys().getServerAliases(keyType, issuers);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return keysFor(alias).getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return keysFor(alias).getPrivateKey(alias);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }
    }

    /** Checks client certificates against the client CAs as they are now; the server side only. */
    private final class TrustManager extends X509ExtendedTrustManager {
        private X509ExtendedTrustManager trust() {
            return (X509ExtendedTrustManager) current().trust().orElseThrow();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            trust().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            trust().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            trust().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            throw new CertificateException("the daemon does not connect to servers over this context");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            throw new CertificateException("the daemon does not connect to servers over this context");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("the daemon does not connect to servers over this context");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return trust().getAcceptedIssuers();
        }
    }
}
