package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.felix.offload.store.harness.FaultProxy.ErrorAnswer;
import dev.felix.offload.store.harness.FaultProxy.FlipByte;
import dev.felix.offload.store.harness.FaultProxy.ResetMidUpload;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proxy's policy, request-body reset, fault counts and down/up, against a plain JDK HTTP
 * server standing in for the store (no S3 needed for what is checked here).
 */
class FaultProxyTest {
    private static final String LONG = "a body long enough to damage";

    private HttpServer upstream;
    private final List<String> arrived = new CopyOnWriteArrayList<>();
    private FaultProxy proxy;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void start() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        upstream.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            exchange.getRequestBody().readAllBytes();
            arrived.add(exchange.getRequestMethod() + " " + path);
            byte[] body = (path.equals("/one") ? "x" : LONG).getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        upstream.start();
        proxy = FaultProxy.start(URI.create("http://127.0.0.1:" + upstream.getAddress().getPort()));
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        upstream.stop(0);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(proxy.endpoint().resolve(path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aMatchingRuleWinsAndThePolicyDecidesTheRestUntilSwapped() throws Exception {
        proxy.policy((method, target) -> method.equals("GET") ? new ErrorAnswer(503, "SlowDown") : null);
        proxy.inject("GET", t -> true, new ErrorAnswer(403, "AccessDenied"), 1);

        assertThat(get("/a").statusCode()).as("the rule's fault").isEqualTo(403);
        assertThat(get("/a").statusCode()).as("the rule used up: the policy's").isEqualTo(503);
        proxy.policy(FaultProxy.PASS);
        HttpResponse<String> passed = get("/a");

        assertThat(passed.statusCode()).isEqualTo(200);
        assertThat(passed.body()).isEqualTo(LONG);
        assertThat(proxy.applied(new ErrorAnswer(403, "AccessDenied"))).isEqualTo(1);
        assertThat(proxy.applied(new ErrorAnswer(503, "SlowDown"))).isEqualTo(1);
        assertThat(arrived).containsExactly("GET /a");
        assertThat(proxy.exchanges()).extracting(FaultProxy.Exchange::fault)
                .containsExactly("ErrorAnswer", "ErrorAnswer", null);
    }

    @Test
    void answerBodyFaultsOnlyCountWhereThereIsABodyToDamage() throws Exception {
        proxy.policy((method, target) -> new FlipByte());

        assertThat(get("/one").body()).as("a one-byte body passes unchanged").isEqualTo("x");
        assertThat(proxy.applied(new FlipByte())).isZero();
        assertThat(get("/long").body()).isNotEqualTo(LONG).hasSameSizeAs(LONG);
        assertThat(proxy.applied(new FlipByte())).isEqualTo(1);
    }

    @Test
    void anUploadResetHalfwayReachesNothingUpstream() throws Exception {
        proxy.policy((method, target) -> method.equals("PUT") ? new ResetMidUpload() : null);
        byte[] body = new byte[64 * 1024];

        try (Socket s = new Socket(proxy.endpoint().getHost(), proxy.endpoint().getPort())) {
            s.setSoTimeout(10_000);
            String head = "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n";
            int answer;
            try {
                OutputStream out = s.getOutputStream();
                out.write(head.getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                InputStream in = s.getInputStream();
                answer = in.read();
            } catch (IOException reset) {
                answer = -1;
            }
            assertThat(answer).as("no answer, only a closed connection").isEqualTo(-1);
        }
        assertThat(proxy.applied(new ResetMidUpload())).isEqualTo(1);
        assertThat(arrived).as("nothing reached the server").isEmpty();

        // an empty upload has nothing to cut off: it passes, and is not counted
        HttpResponse<String> empty = http.send(HttpRequest.newBuilder(proxy.endpoint().resolve("/empty"))
                .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(empty.statusCode()).isEqualTo(200);
        assertThat(proxy.applied(new ResetMidUpload())).isEqualTo(1);
        assertThat(arrived).containsExactly("PUT /empty");
    }

    @Test
    void theStoreGoesDownAndComesBackOnTheSamePort() throws Exception {
        URI endpoint = proxy.endpoint();
        proxy.down();
        assertThat(proxy.isDown()).isTrue();
        assertThat(refusesConnections(endpoint)).as("nothing listens on port %d", endpoint.getPort()).isTrue();

        proxy.up();
        assertThat(proxy.isDown()).isFalse();
        assertThat(proxy.endpoint()).isEqualTo(endpoint);
        assertThat(get("/back").statusCode()).isEqualTo(200);
    }
    /**
     * True once a connection to the endpoint is refused. A connection to a loopback port nobody
     * listens on can still succeed as a TCP self-connect, when the kernel happens to pick that very
     * port as the client's source port; that proves nothing listens either, so it is tried again.
     */
    private static boolean refusesConnections(URI endpoint) throws IOException {
        for (int attempt = 0; attempt < 10; attempt++) {
            try (Socket s = new Socket(endpoint.getHost(), endpoint.getPort())) {
                if (s.getLocalPort() != endpoint.getPort()) {
                    return false; // something answered: a real listener
                }
            } catch (ConnectException refused) {
                return true;
            }
        }
        return false;
    }
}
