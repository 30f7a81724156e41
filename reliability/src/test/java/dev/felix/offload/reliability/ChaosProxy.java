package dev.felix.offload.reliability;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 proxy in front of S3Mock that breaks exchanges as a {@link Policy} decides, for the
 * store-fault tests of whole offload passes. Beyond what object-store's {@code FaultProxy} offers
 * (fixed counts of faults per rule), it has faults chosen per exchange by a policy that can change
 * at any moment (a storm that starts mid-pass, a random share of uploads), a connection reset in
 * the middle of a request body (an upload cut off, not an answer), and a store that is down:
 * the listening socket closed, so connections are refused, and reopened on the same port.
 *
 * <p>Requests are relayed byte for byte (so signatures still verify), one exchange per connection
 * ({@code Connection: close}). Every fault applied is counted.
 */
final class ChaosProxy implements AutoCloseable {

    /** What happens to one exchange. */
    enum Fault {
        /** Relayed unchanged. */
        NONE,
        /** 503 SlowDown, not relayed. */
        SLOW_DOWN,
        /** 403 AccessDenied, not relayed (as if the credentials were rotated). */
        FORBIDDEN,
        /** Half the request body is read, then the connection is reset; nothing reaches the server. */
        RESET_MID_UPLOAD,
        /** Relayed; the answer announces its full length but only half the body comes, then a clean close. */
        TRUNCATE_BODY,
        /** Relayed; one byte in the middle of the answer's body is inverted. */
        FLIP_BYTE,
        /** Relayed; half the answer's body, then a connection reset. */
        RESET_MID_BODY
    }

    /** Decides each exchange's fault from its method and request target (path and query). */
    @FunctionalInterface
    interface Policy {
        Fault decide(String method, String target);
    }

    static final Policy PASS = (method, target) -> Fault.NONE;

    private final URI upstream;
    private final int port;
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "chaos-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Map<Fault, AtomicInteger> applied = new EnumMap<>(Fault.class);
    private final AtomicInteger exchanges = new AtomicInteger();
    private volatile Policy policy = PASS;
    private volatile ServerSocket server;
    private volatile boolean closed;

    private ChaosProxy(URI upstream, ServerSocket server) {
        this.upstream = upstream;
        this.server = server;
        this.port = server.getLocalPort();
        for (Fault f : Fault.values()) {
            applied.put(f, new AtomicInteger());
        }
    }

    static ChaosProxy start(URI upstream) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        ChaosProxy proxy = new ChaosProxy(upstream, socket);
        proxy.accept(socket);
        return proxy;
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    void policy(Policy p) {
        policy = p;
    }

    /** How many exchanges got {@code fault} so far. */
    int applied(Fault fault) {
        return applied.get(fault).get();
    }

    int exchanges() {
        return exchanges.get();
    }

    /** The store goes away: the listening socket is closed, so new connections are refused. */
    synchronized void down() throws IOException {
        ServerSocket s = server;
        server = null;
        if (s != null) {
            s.close();
        }
    }

    boolean isDown() {
        return server == null;
    }

    /** The store comes back on the same port. */
    synchronized void up() throws IOException, InterruptedException {
        if (server != null) {
            return;
        }
        IOException last = null;
        for (int i = 0; i < 100; i++) {
            ServerSocket socket = new ServerSocket();
            socket.setReuseAddress(true);
            try {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
                server = socket;
                accept(socket);
                return;
            } catch (BindException e) {
                socket.close();
                last = e;
                Thread.sleep(50);
            }
        }
        throw new IOException("could not listen on port " + port + " again", last);
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
        down();
        workers.shutdownNow();
    }

    private void accept(ServerSocket socket) {
        Thread acceptor = new Thread(() -> {
            while (!closed && !socket.isClosed()) {
                try {
                    Socket client = socket.accept();
                    workers.execute(() -> serve(client));
                } catch (IOException e) {
                    // closed by down() or close(); the loop ends
                }
            }
        }, "chaos-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
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
            exchanges.incrementAndGet();
            Fault fault = policy.decide(method, target);
            if (fault == null) {
                fault = Fault.NONE;
            }
            if ("100-continue".equalsIgnoreCase(request.header("Expect"))) {
                out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                request.remove("Expect");
            }
            if (fault == Fault.RESET_MID_UPLOAD) {
                long length = request.contentLength();
                if (length > 1) {
                    in.readNBytes((int) Math.min(length / 2, Integer.MAX_VALUE));
                    applied.get(fault).incrementAndGet();
                    client.setSoLinger(true, 0); // RST, not FIN
                    return;
                }
                fault = Fault.NONE; // nothing being uploaded to cut off
            }
            request.body = Message.readBody(in, request, false);
            if (fault == Fault.SLOW_DOWN || fault == Fault.FORBIDDEN) {
                applied.get(fault).incrementAndGet();
                writeError(out, method, fault == Fault.SLOW_DOWN ? 503 : 403,
                        fault == Fault.SLOW_DOWN ? "SlowDown" : "AccessDenied");
                return;
            }
            Message response = forward(request, method);
            byte[] body = response.body;
            boolean hasBody = body.length > 1 && !method.equals("HEAD");
            if (!hasBody && (fault == Fault.TRUNCATE_BODY || fault == Fault.FLIP_BYTE || fault == Fault.RESET_MID_BODY)) {
                fault = Fault.NONE;
            }
            if (fault == Fault.FLIP_BYTE) {
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
            if (fault != Fault.NONE) {
                applied.get(fault).incrementAndGet();
            }
            if (fault == Fault.TRUNCATE_BODY || fault == Fault.RESET_MID_BODY) {
                out.write(body, 0, body.length / 2);
                out.flush();
                if (fault == Fault.RESET_MID_BODY) {
                    client.setSoLinger(true, 0);
                }
                return;
            }
            out.write(body);
            out.flush();
        } catch (IOException e) {
            // the client went away, or the server did: nothing to relay
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

    private static void writeError(OutputStream out, String method, int status, String code) throws IOException {
        byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code
                + "</Code><Message>injected by ChaosProxy</Message><RequestId>chaos</RequestId></Error>")
                .getBytes(StandardCharsets.UTF_8);
        boolean head = method.equals("HEAD");
        String head0 = "HTTP/1.1 " + status + " Injected\r\n"
                + "Content-Type: application/xml\r\n"
                + "Content-Length: " + (head ? 0 : body.length) + "\r\n"
                + "x-amz-request-id: chaos\r\n"
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

        long contentLength() {
            String length = header("Content-Length");
            return length == null ? -1 : Long.parseLong(length.trim());
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

        int status() {
            return Integer.parseInt(startLine.split(" ", 3)[1]);
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
