package dev.felix.offload.daemon;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** The http.auth.*, http.tls.* and http.status.* keys, the token file and the PEM reader. */
class HttpSecurityTest {

    @TempDir
    Path tmp;

    private DaemonConfig config(String... keysAndValues) throws ConfigException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", "d");
        values.put("store", "file:///var/tmp/felix-store");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            values.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return DaemonConfig.of(tmp.resolve("felix.yaml"), values);
    }

    @Test
    void aBindOffLoopbackWithNothingThatAuthenticatesIsRefusedNamingTheSettings() throws Exception {
        assertThatThrownBy(() -> config("http.bind", "0.0.0.0")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("felix.yaml: http.bind: 0.0.0.0 is not a loopback address")
                .hasMessageContaining("http.auth.token-file").hasMessageContaining("http.tls.client-ca")
                .hasMessageContaining("http.auth.allow-unauthenticated: true")
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo("http.bind"));
        assertThat(config("http.bind", "0.0.0.0", "http.auth.allow-unauthenticated", "true").httpSecurity.authenticates())
                .isFalse();
        DaemonConfig withToken = config("http.bind", "0.0.0.0", "http.auth.token-file", "token");
        assertThat(withToken.httpSecurity.tokenFile()).contains(tmp.resolve("token"));
        assertThat(withToken.httpSecurity.scope()).isEqualTo(HttpSecurity.Scope.DATA);
        // Loopback in any spelling needs nothing.
        for (String bind : new String[] {"127.0.0.1", "127.0.0.2", "::1", "localhost"}) {
            assertThat(config("http.bind", bind).httpSecurity.authenticates()).as(bind).isFalse();
        }
    }

    @Test
    void tlsKeysComeInPairsAndClientCasNeedTls() {
        assertThatThrownBy(() -> config("http.tls.certificate", "c.pem")).hasMessageContaining(
                "http.tls.key: is required with http.tls.certificate");
        assertThatThrownBy(() -> config("http.tls.key", "k.pem")).hasMessageContaining(
                "http.tls.certificate: is required with http.tls.key");
        assertThatThrownBy(() -> config("http.tls.client-ca", "ca.pem")).hasMessageContaining(
                "http.tls.client-ca: needs http.tls.certificate and http.tls.key");
        assertThatThrownBy(() -> config("http.auth.scope", "everything")).hasMessageContaining(
                "http.auth.scope: expected data (everything but /metrics, /health and /health/live) or all, got 'everything'");
        assertThatThrownBy(() -> config("http.port", "9464", "http.status.port", "9464")).hasMessageContaining(
                "http.status.port: is 9464, the same as http.port");
        assertThatThrownBy(() -> config("http.status.bind", "0.0.0.0")).hasMessageContaining(
                "http.status.bind: is used only with http.status.port");
        assertThatThrownBy(() -> config("http.auth.tokenfile", "t")).hasMessageContaining(
                "did you mean http.auth.token-file?");
    }

    @Test
    void everyKeyIsDocumented() throws Exception {
        String text = java.nio.file.Files.readString(Path.of(System.getProperty("felix.docs.dir", "../docs"))
                .resolve("configuration.md"), StandardCharsets.UTF_8);
        for (String key : HttpSecurity.KEYS) {
            assertThat(text).as(key).contains("| `" + key + "` |");
        }
        assertThat(DaemonConfig.keys()).containsAll(DaemonConfig.KEYS).containsAll(HttpSecurity.KEYS);
    }

    @Test
    void theDrainBoundIsTwiceTheGrace() throws Exception {
        assertThat(config().drainBound()).hasSeconds(60);
        assertThat(config("shutdown.grace", "45s").drainBound()).hasSeconds(90);
    }

    @Test
    void tokensAreReadAgainWhenTheFileChangesAndAnEmptyFileAdmitsNobody() throws Exception {
        Path file = tmp.resolve("token");
        Files.writeString(file, "# first\nold-token-0123456789\n\n", StandardCharsets.UTF_8);
        TokenFile tokens = TokenFile.open(file);
        assertThat(tokens.accepts("old-token-0123456789")).isTrue();
        assertThat(tokens.accepts("old-token-012345678")).isFalse();
        assertThat(tokens.accepts("")).isFalse();

        // Rotation as an operator does it: both for a while, then only the new one (atomic replace).
        Path next = tmp.resolve("token.next");
        Files.writeString(next, "old-token-0123456789\nnew-token-abcdefghijkl\n", StandardCharsets.UTF_8);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        assertThat(tokens.accepts("new-token-abcdefghijkl")).isTrue();
        assertThat(tokens.accepts("old-token-0123456789")).isTrue();
        // Rewritten in place with the same size: the modification time tells.
        Files.writeString(file, "new-token-abcdefghijkl\nnew-token-abcdefghijkX\n", StandardCharsets.UTF_8);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        assertThat(tokens.accepts("old-token-0123456789")).isFalse();
        assertThat(tokens.accepts("new-token-abcdefghijkX")).isTrue();

        // Too short a token is skipped; an empty or missing file admits nobody.
        Files.writeString(file, "short\n", StandardCharsets.UTF_8);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(10)));
        assertThat(tokens.accepts("short")).isFalse();
        assertThat(tokens.accepts("new-token-abcdefghijkl")).isFalse();
        Files.delete(file);
        assertThat(tokens.accepts("new-token-abcdefghijkl")).isFalse();
        Files.writeString(file, "back-again-0123456789", StandardCharsets.UTF_8);
        assertThat(tokens.accepts("back-again-0123456789")).isTrue();

        Path empty = Files.writeString(tmp.resolve("empty"), "# nothing\n");
        assertThatThrownBy(() -> TokenFile.open(empty)).isInstanceOf(StartRefusedException.class)
                .hasMessageContaining("http.auth.token-file: " + empty + " holds no token");
        assertThatThrownBy(() -> TokenFile.open(tmp.resolve("absent"))).isInstanceOf(StartRefusedException.class)
                .hasMessageContaining("http.auth.token-file: cannot read " + tmp.resolve("absent"));
    }

    /** A PKCS#1 RSA key (cert-manager's default) and a PKCS#8 EC key from openssl; a key of another certificate refused. */
    @Test
    void pemKeysOfTheCommonKindsAreReadAndMatchedToTheirCertificate() throws Exception {
        assumeThat(openssl("version")).as("openssl on the PATH").isTrue();
        Path rsa = tmp.resolve("rsa.key");
        Path rsaCrt = tmp.resolve("rsa.crt");
        assertThat(openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", rsa.toString(), "-out",
                rsaCrt.toString(), "-days", "2", "-subj", "/CN=rsa")).isTrue();
        Path pkcs1 = tmp.resolve("rsa1.key");
        // openssl 3 writes PKCS#8; -traditional gives the PKCS#1 form
        assertThat(openssl("rsa", "-in", rsa.toString(), "-out", pkcs1.toString(), "-traditional")).isTrue();
        assertThat(Files.readString(pkcs1)).contains("BEGIN RSA PRIVATE KEY");
        Path ec = tmp.resolve("ec.key");
        Path ecCrt = tmp.resolve("ec.crt");
        assertThat(openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                ec.toString(), "-out", ecCrt.toString(), "-days", "2", "-subj", "/CN=ec")).isTrue();

        PemFiles.requireMatch(PemFiles.privateKey(rsa), PemFiles.certificates(rsaCrt).get(0), rsa, rsaCrt);
        PemFiles.requireMatch(PemFiles.privateKey(pkcs1), PemFiles.certificates(rsaCrt).get(0), pkcs1, rsaCrt);
        PemFiles.requireMatch(PemFiles.privateKey(ec), PemFiles.certificates(ecCrt).get(0), ec, ecCrt);
        assertThatThrownBy(() -> PemFiles.requireMatch(PemFiles.privateKey(ec), PemFiles.certificates(rsaCrt).get(0), ec,
                rsaCrt)).hasMessageContaining(ec + " is not the private key of the first certificate in " + rsaCrt);
        assertThatThrownBy(() -> PemFiles.privateKey(rsaCrt)).hasMessageContaining("holds no PEM private key");
        assertThatThrownBy(() -> PemFiles.certificates(rsa)).hasMessageContaining("holds no PEM certificate");

        Path sec1 = tmp.resolve("sec1.key");
        assertThat(openssl("ec", "-in", ec.toString(), "-out", sec1.toString())).isTrue();
        if (Files.readString(sec1).contains("BEGIN EC PRIVATE KEY")) {
            assertThatThrownBy(() -> PemFiles.privateKey(sec1)).hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        }
    }

    private boolean openssl(String... args) throws Exception {
        String[] command = new String[args.length + 1];
        command[0] = "openssl";
        System.arraycopy(args, 0, command, 1, args.length);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("openssl.log").toFile()).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
