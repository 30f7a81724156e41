package dev.felix.offload.daemon;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code /read} within {@code http.read.timeout}. {@link ReadEndpoint} makes its answer on a
 * read-work thread, through an exchange that lets only one answer out: when it has not begun
 * answering by the deadline, this answers 504 {@code read_timeout} naming the shard, the offset and
 * the timeout instead, and whatever the read sends later is dropped. The read itself goes on until
 * the store's own timeouts end it (it is not interrupted: an interrupt closes the file channel a
 * local read is using, for every reader of that segment). Store calls still under way at the
 * deadline make the store not ready; an answer of records makes it ready again if the store answered
 * meanwhile.
 */
final class ReadDeadline {

    private ReadDeadline() {
    }

    static void handle(HttpExchange ex, Daemon daemon) throws IOException {
        OnceAnswered once = new OnceAnswered(ex);
        long started = System.nanoTime();
        Future<Void> work;
        try {
            work = daemon.readWork().submit(() -> {
                ReadEndpoint.handle(once, daemon);
                return null;
            });
        } catch (RejectedExecutionException busy) {
            ex.getResponseHeaders().set("Retry-After", "1");
            StatusServer.error(ex, 503, "busy", "every read worker is busy (" + daemon.storeCallsInFlight()
                    + " store calls under way); retry");
            return;
        }
        Duration timeout = daemon.readTimeout();
        try {
            try {
                work.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException late) {
                if (once.claim()) {
                    work.cancel(false);
                    answerLate(ex, daemon, timeout);
                    return;
                }
                work.get(); // its answer has begun (the records are read already): it ends as the client reads
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (once.claim()) {
                StatusServer.error(ex, 503, "stopping", "the daemon is stopping");
            }
            return;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }
        if (ex.getResponseCode() == 200) {
            daemon.readSucceeded(started);
        }
    }

    private static void answerLate(HttpExchange ex, Daemon daemon, Duration timeout) throws IOException {
        java.util.Map<String, String> q = StatusServer.query(ex);
        String shard = q.getOrDefault("shard", "");
        String from = q.getOrDefault("from", "");
        int waiting = daemon.storeCallsInFlight();
        String message = "no answer within http.read.timeout (" + (timeout.toMillis() % 1000 == 0
                ? timeout.toSeconds() + " s" : timeout.toMillis() + " ms") + ") for shard '" + shard + "' from offset "
                + from + (waiting > 0 ? "; the store has not answered (" + waiting + " store calls under way)" : "");
        if (waiting > 0) {
            daemon.storeHealth().timedOut("read_timeout: " + message);
        }
        StatusServer.error(ex, 504, "read_timeout", message, g -> {
            g.writeStringField("shard", shard);
            try {
                Json.u64(g, "offset", Long.parseUnsignedLong(from));
            } catch (NumberFormatException e) {
                g.writeStringField("offset", from);
            }
            g.writeNumberField("timeout_ms", timeout.toMillis());
        });
    }

    /**
     * The exchange as the read sees it: its response headers are its own until it sends them, and it
     * may send them only if the deadline has not answered first.
     */
    private static final class OnceAnswered extends HttpExchange {
        private final HttpExchange ex;
        private final Headers headers = new Headers();
        private final AtomicBoolean answered = new AtomicBoolean();

        OnceAnswered(HttpExchange ex) {
            this.ex = ex;
        }

        /** True when the caller may answer: nothing was sent and nothing will be. */
        boolean claim() {
            return answered.compareAndSet(false, true);
        }

        @Override
        public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
            if (!claim()) {
                throw new IOException("not sent: /read was answered at its deadline");
            }
            ex.getResponseHeaders().putAll(headers);
            ex.sendResponseHeaders(rCode, responseLength);
        }

        @Override
        public Headers getResponseHeaders() {
            return headers;
        }

        @Override
        public Headers getRequestHeaders() {
            return ex.getRequestHeaders();
        }

        @Override
        public URI getRequestURI() {
            return ex.getRequestURI();
        }

        @Override
        public String getRequestMethod() {
            return ex.getRequestMethod();
        }

        @Override
        public HttpContext getHttpContext() {
            return ex.getHttpContext();
        }

        @Override
        public void close() {
            if (answered.get()) {
                ex.close();
            }
        }

        @Override
        public InputStream getRequestBody() {
            return ex.getRequestBody();
        }

        @Override
        public OutputStream getResponseBody() {
            return ex.getResponseBody();
        }

        @Override
        public InetSocketAddress getRemoteAddress() {
            return ex.getRemoteAddress();
        }

        @Override
        public int getResponseCode() {
            return ex.getResponseCode();
        }

        @Override
        public InetSocketAddress getLocalAddress() {
            return ex.getLocalAddress();
        }

        @Override
        public String getProtocol() {
            return ex.getProtocol();
        }

        @Override
        public Object getAttribute(String name) {
            return ex.getAttribute(name);
        }

        @Override
        public void setAttribute(String name, Object value) {
            ex.setAttribute(name, value);
        }

        @Override
        public void setStreams(InputStream i, OutputStream o) {
            ex.setStreams(i, o);
        }

        @Override
        public HttpPrincipal getPrincipal() {
            return ex.getPrincipal();
        }
    }
}
