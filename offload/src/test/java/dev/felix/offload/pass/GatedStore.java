package dev.felix.offload.pass;

import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A real store behind a wrapper that watches the puts of segment objects: it counts the bytes and
 * puts under way at once, notes which puts ran beside another, and lets a test hold or fail a put
 * ({@link Gate}) before it reaches the real store.
 */
final class GatedStore extends ForwardingObjectStore {

    /** Runs before a segment put reaches the real store; may block, or throw to fail the put. */
    @FunctionalInterface
    interface Gate {
        void before(String key) throws StoreException;
    }

    private final ObjectStore real;
    private volatile Gate gate = key -> { };
    private final Map<String, Long> underWay = new HashMap<>();
    private final Set<String> overlapped = new HashSet<>();
    private long bytesUnderWay;
    private long mostBytes;
    private int mostPuts;

    GatedStore(ObjectStore real) {
        super(real);
        this.real = real;
    }

    GatedStore gate(Gate g) {
        this.gate = g;
        return this;
    }

    /** The most bytes of segment puts that were under way at once. */
    synchronized long mostBytes() {
        return mostBytes;
    }

    /** The most segment puts that were under way at once. */
    synchronized int mostPuts() {
        return mostPuts;
    }

    /** Segment puts under way right now. */
    synchronized int putsUnderWay() {
        return underWay.size();
    }

    /** Whether the put of {@code key} ever ran while another segment put was under way. */
    synchronized boolean ranBesideAnother(String key) {
        return overlapped.contains(key);
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        if (!key.endsWith(".segment")) {
            return real.put(key, body, options);
        }
        synchronized (this) {
            if (!underWay.isEmpty()) {
                overlapped.add(key);
                overlapped.addAll(underWay.keySet());
            }
            underWay.merge(key, body.length(), Long::sum);
            bytesUnderWay += body.length();
            mostBytes = Math.max(mostBytes, bytesUnderWay);
            mostPuts = Math.max(mostPuts, underWay.size());
            notifyAll();
        }
        try {
            gate.before(key);
            return real.put(key, body, options);
        } finally {
            synchronized (this) {
                underWay.remove(key);
                bytesUnderWay -= body.length();
            }
        }
    }

    /** Waits (at most 30 s, then fails) until {@code n} segment puts are under way at once. */
    synchronized void awaitPutsUnderWay(int n) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (underWay.size() < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("never saw " + n + " segment puts under way at once (most: " + mostPuts + ")");
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    @Override
    public String describe() {
        return "gated(" + real.describe() + ")";
    }
}
