package dev.felix.offload.store.harness;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.BindException;
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
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 * made to match the damaged bytes), a connection reset halfway through a request body (an upload
 * cut off before anything reaches the server), and holding requests until several are in flight at
 * once (to show that parts really travel concurrently). The store can also be taken down (the
 * listening socket closed, so connections are refused) and brought back on the same port.
 *
 * <p>Faults come from counted rules ({@link #inject}) for tests that aim at particular requests,
 * and from a {@link Policy} that may be swapped at any moment, for campaigns whose faults start and
 * stop mid-run or hit a random share of requests. A matching rule wins; the policy decides the rest.
 *
 * <p>Requests are passed on byte for byte, Host header included, so SigV4 signatures still verify
 * upstream. Each exchange uses its own connection ({@code Connection: close}), which keeps the
 * relay simple; every exchange is recorded, and every fault carried out is counted.
 */
public final class FaultProxy implements AutoCloseable {
    /** One request as it arrived (header names lower-cased), and the fault chosen for it (null: none). */
    public record Exchange(String method, String target, java.util.Map<String, String> headers, String fault) {}

    /** What to do to a matching exchange. */
    public sealed interface Fault
            permits ErrorAnswer, ResetMidBody, Delay, TruncateBody, FlipByte, FlipRequestByte, ResetMidUpload,
                    HoldUntilConcurrent, HideFromListing, NoAnswer, HoldUntilReleased {}

    /** Answers with this status and S3 error code instead of forwarding. */
    public record ErrorAnswer(int status, String code) implements Fault {}

    /**
     * Forwards, then sends the headers and half the body and resets the connection (RST). Like the
     * other answer-body faults, it needs a body of two bytes or more: other answers pass unchanged.
     */
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

    /**
     * Reads half of the request body and resets the connection (RST): an upload cut off on the way,
     * of which the server sees nothing. Only a request announcing a Content-Length over one byte can
     * be cut; any other passes unchanged.
     */
    public record ResetMidUpload() implements Fault {}

    /** Holds each matching request until {@code count} are in flight together (or the wait ends), then forwards. */
    public record HoldUntilConcurrent(int count, Duration maxWait) implements Fault {}

    /**
     * Forwards a listing (a bucket GET answering a {@code ListBucketResult}) and removes from its answer
     * every object whose key {@code hidden} accepts: a store whose listings lag behind its writes. The
     * objects themselves still answer HEAD and GET unless another rule says otherwise.
     */
    public record HideFromListing(Predicate<String> hidden) implements Fault {}

    /**
     * Reads the request and never answers it nor passes it on: a server that accepts connections and
     * then hangs. The connection is held until the client gives up on it (or the proxy closes).
     */
    public record NoAnswer() implements Fault {}

    /**
     * Holds the request, unforwarded, until {@code release} is counted down, then forwards it; a
     * request whose client gave up meanwhile is dropped, never forwarded late.
     */
    public record HoldUntilReleased(java.util.concurrent.CountDownLatch release) implements Fault {}

    /**
     * Chooses the fault for one exchange from its method and request target (path and query), or
     * null for none. It is asked on the proxy's worker threads, possibly several at once, and only
     * for exchanges no counted rule claimed.
     */
    @FunctionalInterface
    public interface Policy {
        Fault choose(String method, String target);
    }

    /** The policy that injects nothing: every exchange no rule claims is relayed unchanged. */
    public static final Policy PASS = (method, target) -> null;

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
    private final int port;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fault-proxy");
        t.setDaemon(true);
        return t;
    });
    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    // a queue rather than a copy-on-write list: long campaigns record many thousands of exchanges
    private final Queue<Exchange> exchanges = new ConcurrentLinkedQueue<>();
    private final Map<Fault, AtomicInteger> applied = new ConcurrentHashMap<>();
    private final Object holdLock = new Object();
    private int held;
    private int maxHeld;
    private volatile Policy policy = PASS;
    private volatile ServerSocket server; // null while the store is down
    private Thread acceptor; // the thread serving server; guarded by this
    private volatile boolean closed;

    private FaultProxy(URI upstream, ServerSocket server) {
        this.upstream = upstream;
        this.server = server;
        this.port = server.getLocalPort();
    }

    public static FaultProxy start(URI upstream) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true); // so that up() can listen on the same port again
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        FaultProxy proxy = new FaultProxy(upstream, socket);
        proxy.acceptOn(socket);
        return proxy;
    }

    /** The proxy's address; it stays the same across {@link #down()} and {@link #up()}. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /**
     * Applies {@code fault} to the next {@code times} exchanges whose method is {@code method} (null: any)
     * and whose request target (path and query) satisfies {@code target}.
     */
    public void inject(String method, Predicate<String> target, Fault fault, int times) {
        rules.add(new Rule(method, target, fault, times));
    }

    /**
     * From now on, exchanges that no rule claims get the fault {@code policy} chooses (null: {@link
     * #PASS}). Exchanges already past their choice keep the fault they got.
     */
    public void policy(Policy policy) {
        this.policy = policy == null ? PASS : policy;
    }

    /** Removes all rules and the policy, forgets the recorded exchanges and zeroes the fault counts. */
    public void reset() {
        rules.clear();
        policy = PASS;
        exchanges.clear();
        applied.clear();
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

    /**
     * How many exchanges this fault was carried out on (records compare by value, so {@code new
     * ErrorAnswer(503, "SlowDown")} counts every such answer). Unlike the recorded exchanges, a fault
     * chosen for an exchange it could not touch (an answer-body fault on a HEAD, say) is not counted.
     */
    public int applied(Fault fault) {
        AtomicInteger n = applied.get(fault);
        return n == null ? 0 : n.get();
    }

    /** The most requests that were held at once by {@link HoldUntilConcurrent}. */
    public int maxHeldTogether() {
        synchronized (holdLock) {
            return maxHeld;
        }
    }

    /**
     * Takes the store down: the listening socket closes, so new connections are refused, as with a
     * server that stopped. Exchanges already under way finish.
     */
    public synchronized void down() throws IOException {
        ServerSocket s = server;
        server = null;
        if (s == null) {
            return;
        }
        s.close();
        // close() returns while the acceptor is still inside accept(); the kernel keeps that
        // listening socket (and queues new connections on it) until the blocked call returns.
        // Only once the acceptor is gone are connections really refused.
        Thread t = acceptor;
        acceptor = null;
        try {
            t.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while the proxy on port " + port + " stopped");
        }
        if (t.isAlive()) {
            throw new IOException("the proxy on port " + port + " still accepts 5 s after its socket closed");
        }
    }

    /**
     * Brings the store back on the same port, so clients holding {@link #endpoint()} reach it again.
     * The port may take a moment to be free for binding again; this retries for up to five seconds.
     */
    public synchronized void up() throws IOException, InterruptedException {
        if (server != null || closed) {
            return;
        }
        IOException last = null;
        for (int i = 0; i < 100; i++) {
            ServerSocket socket = new ServerSocket();
            socket.setReuseAddress(true);
            try {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
            } catch (BindException e) {
                socket.close();
                last = e;
                Thread.sleep(50);
                continue;
            }
            server = socket;
            acceptOn(socket);
            return;
        }
        throw new IOException("could not listen on port " + port + " again", last);
    }

    /** True between {@link #down()} and the {@link #up()} after it. */
    public boolean isDown() {
        return server == null;
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
        down();
        workers.shutdownNow();
    }

    /** Serves connections on {@code socket} until it is closed (by down() or close()). */
    private synchronized void acceptOn(ServerSocket socket) {
        Thread acceptor = new Thread(() -> {
            while (!closed && !socket.isClosed()) {
                try {
                    Socket client = socket.accept();
                    workers.execute(() -> serve(client));
                } catch (IOException e) {
                    // the socket was closed (the loop ends) or one accept failed (the loop goes on)
                }
            }
        }, "fault-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        this.acceptor = acceptor;
    }

    private void count(Fault fault) {
        applied.computeIfAbsent(fault, f -> new AtomicInteger()).incrementAndGet();
    }

    /** The fault for one exchange: a matching rule's (using up one of its count), else the policy's. */
    private Fault choose(String method, String target) {
        for (Rule rule : rules) {
            if ((rule.method == null || rule.method.equals(method)) && rule.target.test(target)) {
                if (rule.remaining.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                    return rule.fault;
                }
            }
        }
        return policy.choose(method, target);
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
            // chosen before the body is read, so that an upload can be cut off on its way
            Fault fault = choose(method, target);
            if ("100-continue".equalsIgnoreCase(request.header("Expect"))) {
                out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                request.remove("Expect");
            }
            java.util.Map<String, String> headers = new java.util.TreeMap<>();
            for (String[] h : request.headers) {
                headers.put(h[0].toLowerCase(Locale.ROOT), h[1]);
            }
            if (fault instanceof ResetMidUpload) {
                long length = request.contentLength();
                if (length > 1) {
                    exchanges.add(new Exchange(method, target, headers, fault.getClass().getSimpleName()));
                    in.readNBytes((int) Math.min(length / 2, Integer.MAX_VALUE));
                    count(fault);
                    client.setSoLinger(true, 0); // close with RST, not FIN
                    return;
                }
                fault = null; // no announced body to cut off
            }
            request.body = Message.readBody(in, request, false);
            exchanges.add(new Exchange(method, target, headers, fault == null ? null : fault.getClass().getSimpleName()));
            if (fault instanceof FlipRequestByte flip && request.body.length > 0) {
                count(fault);
                request.body[request.body.length / 2] ^= (byte) 0xff;
                if (flip.matchCrc32Header() && request.header("x-amz-checksum-crc32") != null) {
                    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                    crc.update(request.body);
                    request.set("x-amz-checksum-crc32", java.util.Base64.getEncoder().encodeToString(
                            java.nio.ByteBuffer.allocate(4).putInt((int) crc.getValue()).array()));
                }
            }
            if (fault instanceof ErrorAnswer error) {
                count(fault);
                writeError(out, method, error);
                return;
            }
            if (fault instanceof NoAnswer) {
                count(fault);
                holdUntilClientLeaves(client, in);
                return;
            }
            if (fault instanceof HoldUntilReleased hold) {
                count(fault);
                synchronized (holdLock) {
                    held++;
                    maxHeld = Math.max(maxHeld, held);
                }
                try {
                    while (!hold.release().await(100, TimeUnit.MILLISECONDS)) {
                        if (closed) {
                            return;
                        }
                    }
                } finally {
                    synchronized (holdLock) {
                        held--;
                    }
                }
                if (clientLeft(client, in)) {
                    return; // never forwarded late
                }
            }
            if (fault instanceof Delay delay) {
                count(fault);
                Thread.sleep(delay.delay().toMillis());
            }
            if (fault instanceof HoldUntilConcurrent hold) {
                count(fault);
                holdUntil(hold);
            }
            Message response = forward(request, method);
            byte[] body = response.body;
            boolean bodyFault = fault instanceof FlipByte || fault instanceof TruncateBody || fault instanceof ResetMidBody;
            if (bodyFault && (body.length < 2 || method.equals("HEAD"))) {
                fault = null; // too little answer to damage: relayed as it is, and not counted
            }
            if (fault instanceof FlipByte) {
                body = body.clone();
                body[body.length / 2] ^= (byte) 0xff;
            }
            if (fault instanceof HideFromListing hide && method.equals("GET")) {
                byte[] filtered = withoutListed(body, hide.hidden());
                if (filtered.length != body.length) {
                    count(fault);
                }
                body = filtered;
            }
            response.remove("Transfer-Encoding");
            response.remove("Connection");
            response.remove("Keep-Alive");
            if (!method.equals("HEAD")) {
                response.set("Content-Length", Integer.toString(body.length));
            }
            response.set("Connection", "close");
            out.write(response.headBytes());
            if (bodyFault && fault != null) {
                count(fault);
            }
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
            // the client went away (e.g. after its attempt timeout), or the server did: nothing to relay
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final java.util.regex.Pattern LISTED = java.util.regex.Pattern.compile(
            "<Contents>.*?<Key>(.*?)</Key>.*?</Contents>", java.util.regex.Pattern.DOTALL);

    /** A listing's answer without the {@code <Contents>} whose key {@code hidden} accepts; any other body as it is. */
    private static byte[] withoutListed(byte[] body, Predicate<String> hidden) {
        String xml = new String(body, StandardCharsets.UTF_8);
        if (!xml.contains("<ListBucketResult")) {
            return body;
        }
        java.util.regex.Matcher m = LISTED.matcher(xml);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String key = m.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
            m.appendReplacement(out, hidden.test(key) ? "" : java.util.regex.Matcher.quoteReplacement(m.group()));
        }
        m.appendTail(out);
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Requests held by {@link HoldUntilReleased} right now. */
    public int heldNow() {
        synchronized (holdLock) {
            return held;
        }
    }

    /** Blocks until the client closes the connection or the proxy closes; sends nothing. */
    private void holdUntilClientLeaves(Socket client, InputStream in) {
        try {
            client.setSoTimeout(200);
            while (!closed) {
                try {
                    if (in.read() < 0) {
                        return;
                    }
                } catch (java.net.SocketTimeoutException quiet) {
                    // the client is still waiting for an answer that never comes
                }
            }
        } catch (IOException e) {
            // the client reset the connection: it gave up
        }
    }

    /** Whether the client has closed its side (a request it has given up on). */
    private static boolean clientLeft(Socket client, InputStream in) {
        try {
            client.setSoTimeout(1);
            return in.read() < 0;
        } catch (java.net.SocketTimeoutException stillThere) {
            return false;
        } catch (IOException e) {
            return true;
        } finally {
            try {
                client.setSoTimeout(60_000);
            } catch (IOException ignored) {
                // the next read fails instead
            }
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
            long n = m.contentLength();
            if (n >= 0) {
                byte[] body = in.readNBytes((int) n);
                if (body.length != n) {
                    throw new EOFException("body ended after " + body.length + " of " + n + " bytes");
                }
                return body;
            }
            return untilCloseWhenUnframed ? in.readAllBytes() : new byte[0];
        }

        /** The announced Content-Length, or -1 without one. */
        long contentLength() {
            String length = header("Content-Length");
            return length == null ? -1 : Long.parseLong(length.trim());
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
