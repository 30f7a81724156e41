package dev.felix.offload.store.harness;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A small HTTP/1.1 proxy in front of a real S3 server that injects faults into chosen exchanges:
 * made-up error answers (500, 503 SlowDown, 403, 404, 412), a connection reset in the middle of a
 * response body, a response held back longer than the client's attempt timeout, a truncated body
 * (the announced length, then a clean close), a body with one flipped byte, a request body with one
 * flipped byte on its way to the server (its {@code x-amz-checksum-crc32} header left alone, or
 * made to match the damaged bytes), and holding requests until several are in flight at once (to
 * show that parts really travel concurrently).
 *
 * <p>Requests are passed on byte for byte, Host header included, so SigV4 signatures still verify
 * upstream. Each exchange uses its own connection ({@code Connection: close}), which keeps the
 * relay simple; every exchange is recorded.
 */
public final class FaultProxy implements AutoCloseable {
    /** One request as it arrived (header names lower-cased), and the fault applied to it (null: none). */
    public record Exchange(String method, String target, java.util.Map<String, String> headers, String fault) {}

    /** What to do to a matching exchange. */
    public sealed interface Fault
            permits ErrorAnswer, ResetMidBody, Delay, TruncateBody, FlipByte, FlipRequestByte, HoldUntilConcurrent {}

    /** Answers with this status and S3 error code instead of forwarding. */
    public record ErrorAnswer(int status, String code) implements Fault {}

    /** Forwards, then sends the headers and half the body and resets the connection (RST). */
    public record ResetMidBody() implements Fault {}

    /** Holds the answer back this long before forwarding. */
    public record Delay(Duration delay) implements Fault {}

    /** Forwards, then sends the announced Content-Length but only half the body, and closes. */
    public record TruncateBody() implements Fault {}

    /** Forwards with one byte in the middle of the body inverted. */
    public record FlipByte() implements Fault {}

    /**
     * Forwards the request with one byte in the middle of its body inverted. With
     * {@code matchCrc32Header}, an {@code x-amz-checksum-crc32} header is replaced by the damaged
     * bytes' CRC32, as if the damage had happened before the client checksummed them, so the server
     * cannot see it. Signatures over the body or that header no longer hold (S3Mock checks none).
     */
    public record FlipRequestByte(boolean matchCrc32Header) implements Fault {}

    /** Holds each matching request until {@code count} are in flight together (or the wait ends), then forwards. */
    public record HoldUntilConcurrent(int count, Duration maxWait) implements Fault {}

    private static final class Rule {
        final String method;
        final Predicate<String> target;
        final Fault fault;
        final AtomicInteger remaining;

        Rule(String method, Predicate<String> target, Fault fault, int times) {
            this.method = method;
            this.target = target;
            this.fault = fault;
            this.remaining = new AtomicInteger(times);
        }
    }

    private final URI upstream;
    private final ServerSocket server;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fault-proxy");
        t.setDaemon(true);
        return t;
    });
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
    private final Object holdLock = new Object();
    private int held;
    private int maxHeld;
    private volatile boolean closed;

    private FaultProxy(URI upstream, ServerSocket server) {
        this.upstream = upstream;
        this.server = server;
    }

    public static FaultProxy start(URI upstream) throws IOException {
        ServerSocket socket = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        FaultProxy proxy = new FaultProxy(upstream, socket);
        Thread acceptor = new Thread(proxy::acceptLoop, "fault-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        return proxy;
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /**
     * Applies {@code fault} to the next {@code times} exchanges whose method is {@code method} (null: any)
     * and whose request target (path and query) satisfies {@code target}.
     */
    public void inject(String method, Predicate<String> target, Fault fault, int times) {
        rules.add(new Rule(method, target, fault, times));
    }

    /** Removes all rules and forgets the recorded exchanges. */
    public void reset() {
        rules.clear();
        exchanges.clear();
        synchronized (holdLock) {
            maxHeld = 0;
        }
    }

    public List<Exchange> exchanges() {
        return List.copyOf(exchanges);
    }

    /** Exchanges with this method whose target satisfies the predicate. */
    public List<Exchange> exchanges(String method, Predicate<String> target) {
        List<Exchange> out = new ArrayList<>();
        for (Exchange e : exchanges) {
            if (e.method().equals(method) && target.test(e.target())) {
                out.add(e);
            }
        }
        return out;
    }

    /** The most requests that were held at once by {@link HoldUntilConcurrent}. */
    public int maxHeldTogether() {
        synchronized (holdLock) {
            return maxHeld;
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        workers.shutdownNow();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                workers.execute(() -> serve(client));
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private Fault take(String method, String target) {
        for (Rule rule : rules) {
            if ((rule.method == null || rule.method.equals(method)) && rule.target.test(target)) {
                if (rule.remaining.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                    return rule.fault;
                }
            }
        }
        return null;
    }

    private void serve(Socket client) {
        try (client) {
            client.setSoTimeout(60_000);
            InputStream in = new BufferedInputStream(client.getInputStream());
            OutputStream out = client.getOutputStream();
            Message request = Message.readHead(in);
            if (request == null) {
                return;
            }
            String[] line = request.startLine.split(" ", 3);
            String method = line[0];
            String target = line.length > 1 ? line[1] : "/";
            if ("100-continue".equalsIgnoreCase(request.header("Expect"))) {
                out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                request.remove("Expect");
            }
            request.body = Message.readBody(in, request, false);
            Fault fault = take(method, target);
            java.util.Map<String, String> headers = new java.util.TreeMap<>();
            for (String[] h : request.headers) {
                headers.put(h[0].toLowerCase(Locale.ROOT), h[1]);
            }
            exchanges.add(new Exchange(method, target, headers, fault == null ? null : fault.getClass().getSimpleName()));
            if (fault instanceof FlipRequestByte flip && request.body.length > 0) {
                request.body[request.body.length / 2] ^= (byte) 0xff;
                if (flip.matchCrc32Header() && request.header("x-amz-checksum-crc32") != null) {
                    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                    crc.update(request.body);
                    request.set("x-amz-checksum-crc32", java.util.Base64.getEncoder().encodeToString(
                            java.nio.ByteBuffer.allocate(4).putInt((int) crc.getValue()).array()));
                }
            }
            if (fault instanceof ErrorAnswer error) {
                writeError(out, method, error);
                return;
            }
            if (fault instanceof Delay delay) {
                Thread.sleep(delay.delay().toMillis());
            }
            if (fault instanceof HoldUntilConcurrent hold) {
                holdUntil(hold);
            }
            Message response = forward(request, method);
            byte[] body = response.body;
            if (fault instanceof FlipByte && body.length > 0) {
                body = body.clone();
                body[body.length / 2] ^= (byte) 0xff;
            }
            response.remove("Transfer-Encoding");
            response.remove("Connection");
            response.remove("Keep-Alive");
            if (!method.equals("HEAD")) {
                response.set("Content-Length", Integer.toString(body.length));
            }
            response.set("Connection", "close");
            out.write(response.headBytes());
            if (fault instanceof ResetMidBody) {
                out.write(body, 0, body.length / 2);
                out.flush();
                client.setSoLinger(true, 0); // close with RST, not FIN
                return;
            }
            if (fault instanceof TruncateBody) {
                out.write(body, 0, body.length / 2);
                out.flush();
                return;
            }
            out.write(body);
            out.flush();
        } catch (IOException e) {
            // the client went away (e.g. after its attempt timeout): nothing to relay to
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void holdUntil(HoldUntilConcurrent hold) throws InterruptedException {
        synchronized (holdLock) {
            held++;
            maxHeld = Math.max(maxHeld, held);
            holdLock.notifyAll();
            long deadline = System.nanoTime() + hold.maxWait().toNanos();
            while (held < hold.count() && maxHeld < hold.count()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.timedWait(holdLock, left);
            }
            held--;
        }
    }

    private Message forward(Message request, String method) throws IOException {
        try (Socket up = new Socket()) {
            up.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 5_000);
            up.setSoTimeout(60_000);
            request.remove("Connection");
            request.set("Connection", "close");
            OutputStream out = up.getOutputStream();
            boolean chunked = "chunked".equalsIgnoreCase(request.header("Transfer-Encoding"));
            out.write(request.headBytes());
            if (chunked) {
                // re-frame the decoded body as one chunk
                if (request.body.length > 0) {
                    out.write((Integer.toHexString(request.body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(request.body);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            } else {
                out.write(request.body);
            }
            out.flush();
            InputStream in = new BufferedInputStream(up.getInputStream());
            Message response = Message.readHead(in);
            while (response != null && response.status() == 100) {
                response = Message.readHead(in);
            }
            if (response == null) {
                throw new EOFException("upstream closed without an answer");
            }
            int status = response.status();
            boolean noBody = method.equals("HEAD") || status == 204 || status == 304;
            response.body = noBody ? new byte[0] : Message.readBody(in, response, true);
            return response;
        }
    }

    private static void writeError(OutputStream out, String method, ErrorAnswer error) throws IOException {
        byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + error.code()
                + "</Code><Message>injected by FaultProxy</Message><RequestId>fault-proxy</RequestId></Error>")
                .getBytes(StandardCharsets.UTF_8);
        boolean head = method.equals("HEAD");
        String head0 = "HTTP/1.1 " + error.status() + " Injected\r\n"
                + "Content-Type: application/xml\r\n"
                + "Content-Length: " + (head ? 0 : body.length) + "\r\n"
                + "x-amz-request-id: fault-proxy\r\n"
                + "Connection: close\r\n\r\n";
        out.write(head0.getBytes(StandardCharsets.US_ASCII));
        if (!head) {
            out.write(body);
        }
        out.flush();
    }

    /** An HTTP/1.1 message head (start line and headers, order kept) and its body. */
    private static final class Message {
        final String startLine;
        final List<String[]> headers;
        byte[] body = new byte[0];

        private Message(String startLine, List<String[]> headers) {
            this.startLine = startLine;
            this.headers = headers;
        }

        static Message readHead(InputStream in) throws IOException {
            String start = readLine(in);
            if (start == null) {
                return null;
            }
            List<String[]> headers = new ArrayList<>();
            String line;
            while ((line = readLine(in)) != null && !line.isEmpty()) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    headers.add(new String[] {line.substring(0, colon), line.substring(colon + 1).trim()});
                }
            }
            return new Message(start, headers);
        }

        private static String readLine(InputStream in) throws IOException {
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                if (b == '\n') {
                    byte[] bytes = buffer.toByteArray();
                    int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                    return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
                }
                buffer.write(b);
                if (buffer.size() > 64 * 1024) {
                    throw new IOException("header line too long");
                }
            }
            return buffer.size() == 0 ? null : buffer.toString(StandardCharsets.ISO_8859_1);
        }

        static byte[] readBody(InputStream in, Message m, boolean untilCloseWhenUnframed) throws IOException {
            String te = m.header("Transfer-Encoding");
            if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                while (true) {
                    String sizeLine = readLine(in);
                    if (sizeLine == null) {
                        throw new EOFException("chunked body ended early");
                    }
                    int semi = sizeLine.indexOf(';');
                    int size = Integer.parseInt((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
                    if (size == 0) {
                        String trailer;
                        while ((trailer = readLine(in)) != null && !trailer.isEmpty()) {
                            // trailers are dropped
                        }
                        return out.toByteArray();
                    }
                    out.write(in.readNBytes(size));
                    readLine(in);
                }
            }
            String length = m.header("Content-Length");
            if (length != null) {
                int n = Integer.parseInt(length.trim());
                byte[] body = in.readNBytes(n);
                if (body.length != n) {
                    throw new EOFException("body ended after " + body.length + " of " + n + " bytes");
                }
                return body;
            }
            return untilCloseWhenUnframed ? in.readAllBytes() : new byte[0];
        }

        int status() {
            String[] parts = startLine.split(" ", 3);
            return Integer.parseInt(parts[1]);
        }

        String header(String name) {
            for (String[] h : headers) {
                if (h[0].equalsIgnoreCase(name)) {
                    return h[1];
                }
            }
            return null;
        }

        void remove(String name) {
            for (Iterator<String[]> it = headers.iterator(); it.hasNext(); ) {
                if (it.next()[0].equalsIgnoreCase(name)) {
                    it.remove();
                }
            }
        }

        void set(String name, String value) {
            remove(name);
            headers.add(new String[] {name, value});
        }

        byte[] headBytes() {
            StringBuilder sb = new StringBuilder(startLine).append("\r\n");
            for (String[] h : headers) {
                sb.append(h[0]).append(": ").append(h[1]).append("\r\n");
            }
            sb.append("\r\n");
            return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
        }
    }
}
