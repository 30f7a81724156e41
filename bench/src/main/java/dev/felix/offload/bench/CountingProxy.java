package dev.felix.offload.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

/**
 * A forwarding HTTP/1.1 proxy in front of an S3 server that counts the requests passing through it by
 * kind. The bytes go through as they are (Host header included, so SigV4 signatures still verify
 * upstream) and each client connection keeps its own upstream connection, so keep-alive and
 * {@code Expect: 100-continue} work as they do without the proxy; only the request heads are read,
 * to count them and to find where each body ends.
 */
final class CountingProxy implements AutoCloseable {

    /** What a request is, from its method and query. */
    enum Kind {
        LIST, HEAD, GET, PUT, DELETE, POST, OTHER;

        static Kind of(String method, String target) {
            int q = target.indexOf('?');
            String query = q < 0 ? "" : target.substring(q + 1);
            return switch (method) {
                case "GET" -> query.contains("list-type=") || query.startsWith("prefix=") || query.contains("&prefix=")
                        || query.contains("delimiter=") ? LIST : GET;
                case "HEAD" -> HEAD;
                case "PUT" -> PUT;
                case "DELETE" -> DELETE;
                case "POST" -> POST;
                default -> OTHER;
            };
        }
    }

    /** Counts by kind, a snapshot. */
    record Counts(Map<Kind, Long> byKind) {
        long of(Kind kind) {
            return byKind.getOrDefault(kind, 0L);
        }

        long total() {
            return byKind.values().stream().mapToLong(Long::longValue).sum();
        }

        /** What was counted since {@code before}. */
        Counts minus(Counts before) {
            Map<Kind, Long> d = new EnumMap<>(Kind.class);
            for (Kind k : Kind.values()) {
                d.put(k, of(k) - before.of(k));
            }
            return new Counts(d);
        }

        /** The non-zero kinds, as {@code LIST 3, HEAD 12}; "none" when there are none. */
        String describe() {
            StringBuilder sb = new StringBuilder();
            for (Kind k : Kind.values()) {
                if (of(k) != 0) {
                    sb.append(sb.length() == 0 ? "" : ", ").append(k).append(' ').append(Table.f("%,d", of(k)));
                }
            }
            return sb.length() == 0 ? "none" : sb.toString();
        }
    }

    private final ServerSocket socket;
    private final String upstreamHost;
    private final int upstreamPort;
    private final Map<Kind, LongAdder> counts = new EnumMap<>(Kind.class);
    private final ExecutorService pumps = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "counting-proxy");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;

    private CountingProxy(ServerSocket socket, URI upstream) {
        this.socket = socket;
        this.upstreamHost = upstream.getHost();
        this.upstreamPort = upstream.getPort();
        for (Kind k : Kind.values()) {
            counts.put(k, new LongAdder());
        }
    }

    /** A proxy on a free loopback port forwarding to {@code upstream} ({@code http://host:port}). */
    static CountingProxy start(URI upstream) throws IOException {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        CountingProxy proxy = new CountingProxy(s, upstream);
        Thread acceptor = new Thread(proxy::accept, "counting-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        return proxy;
    }

    /**
     * Stand-alone, for measuring by hand: {@code java -cp felix-bench.jar dev.felix.offload.bench.CountingProxy
     * UPSTREAM_URL}; prints its endpoint, then the counts so far at every line read from standard input.
     */
    public static void main(String[] args) throws IOException {
        try (CountingProxy proxy = start(URI.create(args[0]))) {
            System.out.println(proxy.endpoint());
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                    StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                System.out.println(proxy.counts().describe());
            }
        }
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort());
    }

    Counts counts() {
        Map<Kind, Long> m = new EnumMap<>(Kind.class);
        counts.forEach((k, v) -> m.put(k, v.sum()));
        return new Counts(m);
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = socket.accept();
                pumps.execute(() -> serve(client));
            } catch (IOException e) {
                // closed (the loop ends), or one accept failed (it goes on)
            }
        }
    }

    private void serve(Socket client) {
        try (client; Socket upstream = new Socket(upstreamHost, upstreamPort)) {
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            InputStream fromServer = upstream.getInputStream();
            OutputStream toClient = client.getOutputStream();
            pumps.execute(() -> {
                try {
                    fromServer.transferTo(toClient);
                } catch (IOException e) {
                    // either side went away: the request side ends too
                } finally {
                    closeQuietly(client);
                }
            });
            relayRequests(new BufferedInputStream(client.getInputStream(), 64 * 1024), upstream.getOutputStream());
        } catch (IOException e) {
            // a connection closed by either side
        }
    }

    /** Copies requests one after another, counting each by its head. */
    private void relayRequests(InputStream in, OutputStream out) throws IOException {
        while (true) {
            byte[] head = readHead(in);
            if (head == null) {
                return;
            }
            String text = new String(head, StandardCharsets.ISO_8859_1);
            String[] lines = text.split("\r\n");
            String[] start = lines[0].split(" ", 3);
            String method = start[0];
            String target = start.length > 1 ? start[1] : "/";
            long length = 0;
            boolean chunked = false;
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = lines[i].substring(colon + 1).trim();
                if (name.equals("content-length")) {
                    length = Long.parseLong(value);
                } else if (name.equals("transfer-encoding") && value.toLowerCase(Locale.ROOT).contains("chunked")) {
                    chunked = true;
                }
            }
            counts.get(Kind.of(method, target)).increment();
            out.write(head);
            out.flush();
            if (chunked) {
                copyChunked(in, out);
            } else {
                copy(in, out, length);
            }
            out.flush();
        }
    }

    /** The bytes up to and including the blank line that ends a request head; null at a clean end. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream(1024);
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new IOException("connection closed inside a request head");
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : b == '\r' ? 1 : 0;
        }
        return head.toByteArray();
    }

    private static void copy(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buf = new byte[64 * 1024];
        long left = length;
        while (left > 0) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (n < 0) {
                throw new IOException("connection closed inside a request body");
            }
            out.write(buf, 0, n);
            left -= n;
        }
    }

    private static void copyChunked(InputStream in, OutputStream out) throws IOException {
        while (true) {
            String sizeLine = readLine(in);
            out.write((sizeLine + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            int semi = sizeLine.indexOf(';');
            long size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
            if (size == 0) {
                // trailers, then the blank line
                while (true) {
                    String trailer = readLine(in);
                    out.write((trailer + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    if (trailer.isEmpty()) {
                        return;
                    }
                }
            }
            copy(in, out, size + 2); // the chunk and its CRLF
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                int n = sb.length();
                return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
            }
            sb.append((char) b);
        }
        throw new IOException("connection closed inside a chunked body");
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        socket.close();
        pumps.shutdownNow();
    }
}
