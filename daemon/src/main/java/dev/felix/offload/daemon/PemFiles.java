package dev.felix.offload.daemon;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files as TLS tools write them: certificates ({@code CERTIFICATE} blocks, a chain or a CA bundle)
 * and a private key, PKCS#8 ({@code PRIVATE KEY}: RSA, EC or Ed25519, what {@code openssl genpkey}
 * writes) or PKCS#1 ({@code RSA PRIVATE KEY}, what cert-manager writes by default). Encrypted keys and
 * SEC1 EC keys are refused with the {@code openssl} command that converts them. Every failure is an
 * {@link IllegalArgumentException} whose message says what is wrong with the file, for the caller to
 * put the setting in front of.
 */
final class PemFiles {

    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    /** A PEM file is a few KiB (a CA bundle some hundreds); the bound keeps a wrong path from being read whole. */
    private static final int MAX_BYTES = 4 * 1024 * 1024;

    private PemFiles() {
    }

    private record Block(String label, byte[] der) {
    }

    private static List<Block> blocks(Path file) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException(file + " is larger than " + (MAX_BYTES >> 20) + " MiB; is it a PEM file?");
        }
        List<Block> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(new String(bytes, StandardCharsets.US_ASCII));
        while (m.find()) {
            try {
                out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ": a " + m.group(1) + " block is not valid base64");
            }
        }
        return out;
    }

    /** Every certificate in {@code file}, in file order; at least one. */
    static List<X509Certificate> certificates(Path file) throws IOException {
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Block b : blocks(file)) {
                if (b.label().equals("CERTIFICATE")) {
                    out.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(b.der())));
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(file + ": a certificate does not decode (" + e.getMessage() + ")");
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return out;
    }

    /** The one private key in {@code file}. */
    static PrivateKey privateKey(Path file) throws IOException {
        for (Block b : blocks(file)) {
            switch (b.label()) {
                case "PRIVATE KEY" -> {
                    return pkcs8(file, b.der());
                }
                case "RSA PRIVATE KEY" -> {
                    return pkcs8(file, rsaPkcs1ToPkcs8(b.der()));
                }
                case "ENCRYPTED PRIVATE KEY" -> throw new IllegalArgumentException(file
                        + " holds an encrypted key, which the daemon cannot open without a passphrase; "
                        + "decrypt it with openssl pkcs8 -in KEY -out KEY.pem -nocrypt (and keep the file's mode 0600)");
                case "EC PRIVATE KEY" -> throw new IllegalArgumentException(file
                        + " holds a SEC1 EC key; convert it to PKCS#8 with openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pem");
                default -> {
                    // another block (a certificate, EC PARAMETERS) before the key
                }
            }
        }
        throw new IllegalArgumentException(file + " holds no PEM private key (-----BEGIN PRIVATE KEY----- or "
                + "-----BEGIN RSA PRIVATE KEY-----)");
    }

    private static PrivateKey pkcs8(Path file, byte[] der) {
        for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException | ClassCastException e) {
                // not this algorithm
            }
        }
        throw new IllegalArgumentException(file + ": the private key does not decode as RSA, EC or Ed25519 (PKCS#8)");
    }

    /** PKCS#1's RSAPrivateKey wrapped as PKCS#8's PrivateKeyInfo: version 0, rsaEncryption with NULL parameters. */
    private static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
        byte[] algorithm = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01,
                0x01, 0x05, 0x00};
        byte[] version = {0x02, 0x01, 0x00};
        byte[] octets = der(0x04, pkcs1);
        byte[] body = new byte[version.length + algorithm.length + octets.length];
        System.arraycopy(version, 0, body, 0, version.length);
        System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
        System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
        return der(0x30, body);
    }

    private static byte[] der(int tag, byte[] content) {
        int n = content.length;
        byte[] length = n < 0x80 ? new byte[] {(byte) n}
                : n < 0x100 ? new byte[] {(byte) 0x81, (byte) n}
                : n < 0x10000 ? new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n}
                : new byte[] {(byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n};
        byte[] out = new byte[1 + length.length + n];
        out[0] = (byte) tag;
        System.arraycopy(length, 0, out, 1, length.length);
        System.arraycopy(content, 0, out, 1 + length.length, n);
        return out;
    }

    /** Fails unless {@code key} is the private half of {@code certificate}'s public key: signs and verifies a test message. */
    static void requireMatch(PrivateKey key, X509Certificate certificate, Path keyFile, Path certificateFile) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448
        };
        try {
            byte[] message = "felix-offload key check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(message);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(message);
            if (verifier.verify(signature)) {
                return;
            }
        } catch (GeneralSecurityException e) {
            // a key of another kind than the certificate's: no match
        }
        throw new IllegalArgumentException(keyFile + " is not the private key of the first certificate in "
                + certificateFile + " (" + certificate.getSubjectX500Principal().getName() + ")");
    }
}
