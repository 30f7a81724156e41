package dev.felix.offload.store.remote;

import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UntrustedServerException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The certificates a remote store's TLS connections trust when the store URI names a CA bundle
 * ({@code ca-bundle=/etc/felix/ca.pem}): a PEM file of one or more certificates, the only ones trusted
 * for that store (as {@code curl --cacert} and the AWS CLI's {@code ca_bundle} take it), for an
 * endpoint whose certificate a private CA signed. Without one, the JVM's trust store decides.
 *
 * <p>Also what a TLS failure says: the endpoint, and how to trust its CA, rather than the bare
 * "PKIX path building failed" of the JDK; such a failure is not retried (no second attempt trusts
 * the certificate any more than the first).
 */
public final class CaBundle {

    private static final int MAX_BYTES = 1 << 20;

    private final Path file;
    private final List<X509Certificate> certificates;

    private CaBundle(Path file, List<X509Certificate> certificates) {
        this.file = file;
        this.certificates = certificates;
    }

    /**
     * Reads a PEM bundle.
     *
     * @throws IllegalArgumentException naming the setting and the file when it cannot be read or holds no
     *                                  certificate
     */
    public static CaBundle read(Path file) {
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw new IllegalArgumentException("setting 'ca-bundle': " + file + " is larger than 1 MiB; expected a "
                        + "PEM file of CA certificates");
            }
            bytes = Files.readAllBytes(file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("setting 'ca-bundle': cannot read " + file + ": no such file", e);
        } catch (java.nio.file.AccessDeniedException e) {
            throw new IllegalArgumentException("setting 'ca-bundle': cannot read " + file + ": permission denied", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("setting 'ca-bundle': cannot read " + file + ": "
                    + S3ErrorTranslation.describe(e), e);
        }
        List<X509Certificate> certs = new ArrayList<>();
        try {
            Collection<? extends java.security.cert.Certificate> read =
                    CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(bytes));
            for (java.security.cert.Certificate c : read) {
                if (c instanceof X509Certificate x) {
                    certs.add(x);
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException("setting 'ca-bundle': " + file + " is not a PEM file of certificates: "
                    + e.getMessage(), e);
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException("setting 'ca-bundle': " + file + " holds no certificate (expected "
                    + "-----BEGIN CERTIFICATE----- blocks)");
        }
        return new CaBundle(file, List.copyOf(certs));
    }

    public Path file() {
        return file;
    }

    public List<X509Certificate> certificates() {
        return certificates;
    }

    /** Trust managers that trust exactly this bundle's certificates. */
    public TrustManager[] trustManagers() {
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < certificates.size(); i++) {
                store.setCertificateEntry("ca-" + i, certificates.get(i));
            }
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init(store);
            return f.getTrustManagers();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("the JVM cannot build a trust store of " + file + ": " + e.getMessage(), e);
        }
    }

    /** The one X.509 trust manager of {@link #trustManagers()}, as OkHttp wants it. */
    public X509TrustManager x509TrustManager() {
        for (TrustManager m : trustManagers()) {
            if (m instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new IllegalStateException("the JVM's trust manager factory gave no X.509 trust manager");
    }

    /** A TLS context trusting this bundle. */
    public SSLContext sslContext() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JVM cannot make a TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * {@code translated}, or when {@code failure} is a certificate the client would not accept, a
     * refusal (not retried) naming the endpoint, what was wrong and how to trust the server's CA.
     */
    public static StoreException explain(StoreException translated, Throwable failure, String operation, String key,
                                         RemoteStoreSettings settings) {
        Throwable certificate = null;
        Throwable peer = null;
        for (Throwable c = failure; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof CertPathBuilderException || c instanceof CertPathValidatorException
                    || c instanceof CertificateException) {
                certificate = c;
            } else if (c instanceof SSLPeerUnverifiedException) {
                peer = c;
            }
        }
        if (certificate == null && peer == null) {
            return translated;
        }
        String endpoint = settings.endpoint().map(Object::toString).orElse("https://s3." + settings.region() + ".amazonaws.com");
        String trusted = settings.caBundle().map(b -> "the CA bundle " + b.file()).orElse("the JVM's trust store");
        String why = certificate != null
                ? "its certificate is not signed by a CA " + trusted + " holds (" + certificate.getMessage() + ")"
                : "its certificate does not name the host the endpoint names (" + peer.getMessage() + ")";
        String how = certificate != null
                ? "; to trust the CA that signed it, give its certificate as a PEM file: ca-bundle=/path/to/ca.pem in the "
                        + "store URI (or add it to the JVM's trust store, -Djavax.net.ssl.trustStore=...)"
                : "; use an endpoint host the certificate names, or have the server's certificate name this one";
        return new UntrustedServerException(operation + (key == null ? "" : " of key '" + key + "'") + " failed: TLS with "
                + endpoint + " failed: " + why + how, key, failure);
    }
}
