package dev.felix.offload.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

/**
 * An HTTPS endpoint for a plain-HTTP S3 server, with a certificate of its own CA: TLS ends here and
 * the bytes go on unchanged to the server behind (SigV4 signs the Host header the client sent, which
 * arrives as sent). The CA and the server's certificate are made once by the JDK's keytool: a CA
 * certificate ({@link #caPem()}) and a server certificate it signed for 127.0.0.1 and localhost.
 */
final class TlsFront implements AutoCloseable {

    private static final String PASSWORD = "felix-test";

    private final SSLServerSocket listener;
    private final URI behind;
    private final Path caPem;
    private final List<Socket> open = new ArrayList<>();
    private final Thread acceptor;

    private TlsFront(SSLServerSocket listener, URI behind, Path caPem) {
        this.listener = listener;
        this.behind = behind;
        this.caPem = caPem;
        this.acceptor = new Thread(this::accept, "tls-front");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** Makes the CA and the server certificate under {@code dir} and listens on a free 127.0.0.1 port. */
    static TlsFront start(Path dir, URI behind) throws Exception {
        Files.createDirectories(dir);
        Path ca = dir.resolve("ca.p12");
        Path server = dir.resolve("server.p12");
        Path caPem = dir.resolve("ca.pem");
        Path csr = dir.resolve("server.csr");
        Path serverPem = dir.resolve("server.pem");
        for (Path p : List.of(ca, server, caPem, csr, serverPem)) {
            Files.deleteIfExists(p);
        }
        keytool(dir, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=felix-offload test CA", "-ext", "bc:c", "-validity", "3", "-keystore", ca.toString());
        keytool(dir, "-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-file", caPem.toString());
        keytool(dir, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=127.0.0.1", "-validity", "3", "-keystore", server.toString());
        keytool(dir, "-certreq", "-alias", "server", "-keystore", server.toString(), "-file", csr.toString());
        keytool(dir, "-gencert", "-alias", "ca", "-keystore", ca.toString(), "-infile", csr.toString(), "-outfile",
                serverPem.toString(), "-rfc", "-validity", "3", "-ext", "SAN=ip:127.0.0.1,dns:localhost");
        keytool(dir, "-importcert", "-noprompt", "-alias", "ca", "-file", caPem.toString(), "-keystore", server.toString());
        keytool(dir, "-importcert", "-alias", "server", "-file", serverPem.toString(), "-keystore", server.toString());

        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(server)) {
            keys.load(in, PASSWORD.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD.toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);
        SSLServerSocket listener = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 50,
                InetAddress.getLoopbackAddress());
        return new TlsFront(listener, behind, caPem);
    }

    private static void keytool(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        command.addAll(List.of(args));
        command.addAll(List.of("-storepass", PASSWORD, "-storetype", "PKCS12"));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool " + String.join(" ", args) + " failed: " + out);
        }
    }

    /** The HTTPS endpoint: {@code https://127.0.0.1:PORT}. */
    URI endpoint() {
        return URI.create("https://127.0.0.1:" + listener.getLocalPort());
    }

    /** The CA's certificate, PEM. */
    Path caPem() {
        return caPem;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(behind.getHost(), behind.getPort()), 10_000);
                synchronized (open) {
                    open.add(client);
                    open.add(server);
                }
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                // closed, or one connection failed: the next accept goes on
            }
        }
    }

    /** Copies {@code from} to {@code to} until either ends; a failed handshake ends the client's side. */
    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // the other side went away, or the client refused our certificate
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tls-front-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        synchronized (open) {
            open.forEach(TlsFront::closeQuietly);
        }
    }
}
