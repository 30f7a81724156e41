package dev.felix.offload.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The daemon's endpoint off loopback, through the real process ({@code run --config}) bound to
 * {@code 0.0.0.0}: refused without authentication; with a token file, 401 without a token, 403 with a
 * wrong one, 200 with a good one, the file rotated under the running daemon; over TLS with a CA this
 * test makes with the JDK's keytool; client certificates verified against that CA, an expired one and
 * one from another CA refused; the status listener open while the main one asks for credentials.
 */
@Order(6) // the longest classes start first (see the pom): 66 s
class HttpAuthIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PASSWORD = "changeit";

    @TempDir
    Path work;

    private Path pki;
    private String shard;

    @BeforeEach
    void root() throws Exception {
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "data", "--streams", "1",
                "--shards-per-stream", "1", "--records", "300");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        try (var dirs = Files.list(work.resolve("data"))) {
            shard = dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .findFirst().orElseThrow();
        }
        Files.createDirectories(work.resolve("store"));
        pki = Files.createDirectories(work.resolve("pki"));
    }

    private Path config(String... lines) throws IOException {
        List<String> all = new ArrayList<>(List.of("data-dir: data", "store: " + work.resolve("store").toUri(),
                "offload.schedule: 'off'", "retention.schedule: 'off'", "scrub.schedule: 'off'", "http.bind: 0.0.0.0",
                "http.port: 0"));
        all.addAll(List.of(lines));
        Path file = work.resolve("felix.yaml");
        Files.writeString(file, String.join("\n", all) + "\n", StandardCharsets.UTF_8);
        return file;
    }

    /** The daemon's base URL on 127.0.0.1 (it printed 0.0.0.0, which no certificate names). */
    private static String local(FelixJar.Daemon d) {
        return d.base.replace("0.0.0.0", "127.0.0.1");
    }

    private static HttpResponse<String> get(HttpClient client, String url, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String error(HttpResponse<String> r) throws IOException {
        return JSON.readTree(r.body()).get("error").asText();
    }

    @Test
    void aBindOffLoopbackWithoutAuthenticationIsRefusedAtStartUp() throws Exception {
        Path file = config();
        FelixJar.Result r = FelixJar.inside(work, Map.of(), "refused", "run", "--config", file.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines()).hasSize(1);
        assertThat(r.err()).contains("http.bind: 0.0.0.0 is not a loopback address", "http.auth.allow-unauthenticated: true")
                .doesNotContain("Exception", "\tat ");
        assertThat(r.out()).doesNotContain("serving");

        // A token file that holds no token refuses the start too, naming the setting.
        Files.writeString(work.resolve("token"), "# nothing yet\n");
        FelixJar.Result empty = FelixJar.inside(work, Map.of(), "empty", "run", "--config",
                config("http.auth.token-file: token").toString());
        assertThat(empty.exitCode()).as(empty.out() + empty.err()).isEqualTo(2);
        assertThat(empty.err()).contains("http.auth.token-file: ", "holds no token").doesNotContain("\tat ");

        // Told explicitly, it serves everything to anyone, and says so.
        try (FelixJar.Daemon d = FelixJar.Daemon.start(work, Map.of(), config("http.auth.allow-unauthenticated: true"))) {
            HttpClient client = HttpClient.newHttpClient();
            assertThat(get(client, local(d) + "/read?shard=" + shard + "&from=0&max_bytes=100", null).statusCode()).isEqualTo(200);
            FelixJar.await("the warning is logged", Duration.ofSeconds(30),
                    () -> d.stderr().contains("http.auth.allow-unauthenticated is true"));
            assertThat(d.terminate()).isZero();
        }
    }

    @Test
    void bearerTokensOverTlsRotatedWithoutRestartAndAStatusListenerForProbes() throws Exception {
        Pki ca = Pki.authority(pki, "ca");
        Path serverCrt = ca.issue("server", "serverAuth", false);
        String token = "first-token-" + "a".repeat(24);
        Path tokenFile = work.resolve("token");
        Files.writeString(tokenFile, token + "\n");
        Path file = config("http.auth.token-file: token", "http.tls.certificate: " + serverCrt,
                "http.tls.key: " + pki.resolve("server.key"), "http.status.port: 0", "http.auth.scope: all");
        try (FelixJar.Daemon d = FelixJar.Daemon.start(work, Map.of(), file)) {
            assertThat(d.base).startsWith("https://");
            String base = local(d);
            HttpClient client = HttpClient.newBuilder().sslContext(ca.clientContext(Optional.empty()))
                    .connectTimeout(Duration.ofSeconds(5)).build();
            String read = base + "/read?shard=" + shard + "&from=0&max_bytes=1000";

            HttpResponse<String> none = get(client, read, null);
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(error(none)).isEqualTo("unauthorized");
            assertThat(none.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
            assertThat(none.body()).doesNotContain("payload");
            HttpResponse<String> wrong = get(client, read, "first-token-" + "b".repeat(24));
            assertThat(wrong.statusCode()).isEqualTo(403);
            assertThat(error(wrong)).isEqualTo("forbidden");
            assertThat(get(client, read, "short").statusCode()).isEqualTo(403);
            HttpResponse<String> good = get(client, read, token);
            assertThat(good.statusCode()).as(good.body()).isEqualTo(200);
            assertThat(JSON.readTree(good.body().lines().findFirst().orElseThrow()).get("offset").asLong()).isZero();
            // scope all: /shards and /metrics need it too on this listener
            assertThat(get(client, base + "/shards", null).statusCode()).isEqualTo(401);
            assertThat(get(client, base + "/metrics", null).statusCode()).isEqualTo(401);
            assertThat(get(client, base + "/shards", token).statusCode()).isEqualTo(200);

            // The status listener: plain HTTP, no credential, status only.
            Matcher m = Pattern.compile("status \\(/metrics, /health\\) also on http://[^:]+:(\\d+)/").matcher(d.stdout());
            assertThat(m.find()).as(d.stdout()).isTrue();
            String status = "http://127.0.0.1:" + m.group(1);
            HttpClient plain = HttpClient.newHttpClient();
            assertThat(get(plain, status + "/health/live", null).statusCode()).isEqualTo(200);
            assertThat(get(plain, status + "/health", null).statusCode()).isEqualTo(200);
            HttpResponse<String> metrics = get(plain, status + "/metrics", null);
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(PrometheusText.parse(metrics.body()).value("felix_http_forbidden_total", "")).isEqualTo(2);
            assertThat(get(plain, status + "/read?shard=" + shard + "&from=0", null).statusCode()).isEqualTo(404);
            assertThat(get(plain, status + "/shards", null).statusCode()).isEqualTo(404);

            // Rotation: both tokens for a while, then only the new one; no restart.
            String second = "second-token-" + "c".repeat(24);
            replace(tokenFile, token + "\n" + second + "\n");
            assertThat(get(client, read, second).statusCode()).isEqualTo(200);
            assertThat(get(client, read, token).statusCode()).isEqualTo(200);
            replace(tokenFile, second + "\n");
            assertThat(get(client, read, token).statusCode()).isEqualTo(403);
            assertThat(get(client, read, second).statusCode()).isEqualTo(200);
            // Rewritten in place, as `echo new > token` does.
            String third = "third-token-" + "d".repeat(30);
            Files.writeString(tokenFile, third + "\n");
            FelixJar.await("the rewritten token file is read again", Duration.ofSeconds(30), () -> {
                try {
                    return get(client, read, third).statusCode() == 200;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(get(client, read, second).statusCode()).isEqualTo(403);

            // A renewed certificate (key first, then certificate, as a renewal writes them) is used from
            // the next handshake on; until both are in place the old pair keeps serving.
            assertThat(get(client, base + "/health/live", null).sslSession().orElseThrow().getPeerPrincipal().getName())
                    .isEqualTo("CN=server");
            ca.issue("renewed", "serverAuth", false);
            replace(pki.resolve("server.key"), Files.readString(pki.resolve("renewed.key")));
            assertThat(get(HttpClient.newBuilder().sslContext(ca.clientContext(Optional.empty())).build(), read, third)
                    .statusCode()).isEqualTo(200);
            replace(pki.resolve("server.crt"), Files.readString(pki.resolve("renewed.crt")));
            FelixJar.await("new handshakes present the renewed certificate", Duration.ofSeconds(30), () -> {
                try {
                    HttpClient fresh = HttpClient.newBuilder().sslContext(ca.clientContext(Optional.empty())).build();
                    return get(fresh, base + "/health/live", null).sslSession().orElseThrow().getPeerPrincipal().getName()
                            .equals("CN=renewed");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(d.stderr()).contains("TLS files changed");

            // Plain HTTP to the TLS listener gets nothing.
            assertThatThrownBy(() -> get(plain, read.replace("https://", "http://"), third)).isInstanceOf(IOException.class);
            assertThat(d.terminate()).isZero();
            assertThat(d.stdout() + d.stderr()).doesNotContain(token, second, third);
        }
    }

    @Test
    void clientCertificatesFromTheCaAuthenticateAndExpiredOrForeignOnesAreRefused() throws Exception {
        Pki ca = Pki.authority(pki, "ca");
        Path serverCrt = ca.issue("server", "serverAuth", false);
        ca.issue("client", "clientAuth", false);
        ca.issue("expired", "clientAuth", true);
        Pki other = Pki.authority(pki, "other-ca");
        other.issue("stranger", "clientAuth", false);
        Path file = config("http.tls.certificate: " + serverCrt, "http.tls.key: " + pki.resolve("server.key"),
                "http.tls.client-ca: " + pki.resolve("ca.crt"));
        try (FelixJar.Daemon d = FelixJar.Daemon.start(work, Map.of(), file)) {
            String base = local(d);
            String read = base + "/read?shard=" + shard + "&from=0&max_bytes=1000";

            HttpClient client = HttpClient.newBuilder().sslContext(ca.clientContext(Optional.of("client"))).build();
            HttpResponse<String> good = get(client, read, null);
            assertThat(good.statusCode()).as(good.body()).isEqualTo(200);
            assertThat(good.body()).contains("\"offset\":0");
            assertThat(get(client, base + "/shards", null).statusCode()).isEqualTo(200);

            // No certificate: the status paths answer (probes), data does not.
            HttpClient anonymous = HttpClient.newBuilder().sslContext(ca.clientContext(Optional.empty())).build();
            assertThat(get(anonymous, base + "/health/live", null).statusCode()).isEqualTo(200);
            assertThat(get(anonymous, base + "/metrics", null).statusCode()).isEqualTo(200);
            HttpResponse<String> none = get(anonymous, read, null);
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.body()).contains("client certificate").doesNotContain("payload");
            assertThat(get(anonymous, read, "any-token-at-all-0123456789").statusCode()).isEqualTo(401);

            // An expired certificate from the right CA, and a valid one from another CA: no answer at all.
            for (Pki.Identity refused : List.of(new Pki.Identity(ca, "expired"), new Pki.Identity(other, "stranger"))) {
                HttpClient c = HttpClient.newBuilder().sslContext(refused.ca().clientContext(Optional.of(refused.name()),
                        ca)).build();
                assertThatThrownBy(() -> get(c, read, null)).as(refused.name()).isInstanceOf(IOException.class);
                assertThatThrownBy(() -> get(c, base + "/health", null)).as(refused.name()).isInstanceOf(IOException.class);
            }
            // The good one still works after those (the server did not get stuck).
            assertThat(get(HttpClient.newBuilder().sslContext(ca.clientContext(Optional.of("client"))).build(), read, null)
                    .statusCode()).isEqualTo(200);
            assertThat(d.terminate()).isZero();
        }

        // A key that is not the certificate's refuses the start, naming the setting.
        Path mismatched = config("http.tls.certificate: " + serverCrt, "http.tls.key: " + pki.resolve("client.key"),
                "http.tls.client-ca: " + pki.resolve("ca.crt"));
        FelixJar.Result r = FelixJar.inside(work, Map.of(), "mismatch", "run", "--config", mismatched.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).contains("http.tls.key: ", "is not the private key of the first certificate in")
                .doesNotContain("\tat ");
    }

    private static void replace(Path file, String text) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, text);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** A certificate authority made with the JDK's keytool; keys written as PKCS#8 PEM as the daemon reads them. */
    static final class Pki {
        private static final String KEYTOOL = "sun.security.tools.keytool";

        record Identity(Pki ca, String name) {
        }

        final Path dir;
        final String name;

        private Pki(Path dir, String name) {
            this.dir = dir;
            this.name = name;
        }

        static Pki authority(Path dir, String name) throws Exception {
            keytool(dir, "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                    "CN=felix-offload test " + name, "-ext", "bc:c", "-validity", "3", "-keystore", name + ".p12");
            keytool(dir, "-exportcert", "-rfc", "-alias", name, "-keystore", name + ".p12", "-file", name + ".crt");
            return new Pki(dir, name);
        }

        /** Issues {@code who}'s certificate ({@code who.crt}, chain with the CA) and key ({@code who.key}). */
        Path issue(String who, String usage, boolean expired) throws Exception {
            keytool(dir, "-genkeypair", "-alias", who, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + who,
                    "-validity", "3", "-keystore", who + ".p12");
            keytool(dir, "-certreq", "-alias", who, "-keystore", who + ".p12", "-file", who + ".csr");
            List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", name, "-keystore", name + ".p12",
                    "-infile", who + ".csr", "-outfile", who + ".signed", "-ext", "eku=" + usage,
                    "-ext", "san=ip:127.0.0.1,dns:localhost"));
            if (expired) {
                gencert.addAll(List.of("-startdate", "-10d", "-validity", "2"));
            } else {
                gencert.addAll(List.of("-validity", "3"));
            }
            keytool(dir, gencert.toArray(new String[0]));
            Path crt = dir.resolve(who + ".crt");
            Files.writeString(crt, Files.readString(dir.resolve(who + ".signed")) + Files.readString(dir.resolve(name + ".crt")));
            PrivateKey key = (PrivateKey) load(dir.resolve(who + ".p12")).getKey(who, PASSWORD.toCharArray());
            Files.writeString(dir.resolve(who + ".key"), "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                    + "\n-----END PRIVATE KEY-----\n");
            return crt;
        }

        SSLContext clientContext(Optional<String> identity) throws Exception {
            return clientContext(identity, this);
        }

        /** A client trusting {@code serverCa}, presenting {@code identity}'s certificate (issued by this CA) if given. */
        SSLContext clientContext(Optional<String> identity, Pki serverCa) throws Exception {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", certificates(serverCa.dir.resolve(serverCa.name + ".crt")).get(0));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            KeyManagerFactory kmf;
            javax.net.ssl.KeyManager[] keyManagers = null;
            if (identity.isPresent()) {
                String who = identity.get();
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                PrivateKey key = (PrivateKey) load(dir.resolve(who + ".p12")).getKey(who, PASSWORD.toCharArray());
                keys.setKeyEntry(who, key, PASSWORD.toCharArray(),
                        certificates(dir.resolve(who + ".crt")).toArray(new X509Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, PASSWORD.toCharArray());
                keyManagers = new javax.net.ssl.KeyManager[] {new Presenting(who, (javax.net.ssl.X509KeyManager) kmf.getKeyManagers()[0])};
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers, tmf.getTrustManagers(), null);
            return context;
        }

        /**
         * Presents its one certificate whatever CAs the server names: the JDK's own key manager would
         * hold back a certificate of another CA (or pick by validity), and the server is to see it.
         */
        private static final class Presenting extends javax.net.ssl.X509ExtendedKeyManager {
            private final String alias;
            private final javax.net.ssl.X509KeyManager keys;

            Presenting(String alias, javax.net.ssl.X509KeyManager keys) {
                this.alias = alias;
                this.keys = keys;
            }

            @Override
            public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
                return new String[] {alias};
            }

            @Override
            public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
                return alias;
            }

            @Override
            public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers, javax.net.ssl.SSLEngine engine) {
                return alias;
            }

            @Override
            public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
                return null;
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return keys.getCertificateChain(alias);
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return keys.getPrivateKey(alias);
            }
        }

        private static List<X509Certificate> certificates(Path pem) throws Exception {
            try (InputStream in = Files.newInputStream(pem)) {
                List<X509Certificate> out = new ArrayList<>();
                for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                    out.add((X509Certificate) c);
                }
                return out;
            }
        }

        private static KeyStore load(Path p12) throws Exception {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(p12)) {
                ks.load(in, PASSWORD.toCharArray());
            }
            return ks;
        }

        /** The options of {@link #keytool} whose values are file names, relative to its directory. */
        private static final java.util.Set<String> FILE_OPTIONS = java.util.Set.of("-keystore", "-file", "-infile",
                "-outfile");

        /**
         * Runs keytool in {@code dir}: inside this JVM (keytool's own class, about a second less a call than
         * its process) where the build opens its package to the tests (the module's argLine), else as the
         * JDK's command. Either way its output goes into a failure's message.
         */
        private static void keytool(Path dir, String... args) throws Exception {
            List<String> options = new ArrayList<>(List.of(args));
            options.addAll(List.of("-storepass", PASSWORD, "-noprompt"));
            if (Object.class.getModule().isOpen(KEYTOOL, HttpAuthIT.class.getModule())) {
                for (int i = 1; i < options.size(); i++) {
                    if (FILE_OPTIONS.contains(options.get(i - 1))) {
                        options.set(i, dir.resolve(options.get(i)).toString());
                    }
                }
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                Class<?> main = Class.forName(KEYTOOL + ".Main");
                var create = main.getDeclaredConstructor();
                create.setAccessible(true);
                var run = main.getDeclaredMethod("run", String[].class, java.io.PrintStream.class);
                run.setAccessible(true);
                try {
                    run.invoke(create.newInstance(), options.toArray(String[]::new),
                            new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
                } catch (java.lang.reflect.InvocationTargetException e) {
                    throw new AssertionError("keytool " + String.join(" ", args) + ": " + out.toString(StandardCharsets.UTF_8),
                            e.getCause());
                }
                return;
            }
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
            command.addAll(options);
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("keytool " + String.join(" ", args) + ": " + out).isZero();
        }
    }
}
