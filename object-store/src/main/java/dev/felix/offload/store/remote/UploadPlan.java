package dev.felix.offload.store.remote;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * Whether a body larger than one part goes up in one PUT or in parts, chosen per endpoint from what
 * is measured, unless the operator set {@code multipart-threshold}, which then decides alone.
 *
 * <p>Parts cost the server a second write on some servers (S3Proxy and S3Mock write every part,
 * then read them back into the object) and nine more requests per 128 MiB segment everywhere; a
 * single PUT of a large body risks a long attempt: the attempt timeout bounds the whole body, and a
 * failure near its end sends it all again. So one PUT is chosen where it is short: where the upload
 * rate one request was measured to move here (per request, so it includes what the requests in
 * flight beside it take), capped by the pass's {@code --bandwidth}, sends the body within
 * {@link #singlePutBound} (an eighth of the attempt timeout, at most {@value #SINGLE_PUT_SECONDS}
 * s). Anywhere slower, or before anything was measured, bodies above the default threshold go in
 * parts, several at once, each bounded by the attempt timeout. The rate is an average over bodies of
 * at least a MiB, each measured whole (a single PUT's attempt, or a multipart upload from its
 * creation to its completion, its parts together), so it is what one body gets beside the others in
 * flight whichever way it went: the rate of one part among four in flight would understate what a
 * single PUT gets and keep every segment in parts. It is halved by an upload attempt that fails (so a
 * link that starts failing turns back to parts), and kept with the server's findings
 * ({@link ServerFindings#uploadRate()}), so a later command starts from it.
 *
 * <p>A MinIO store under {@code --bandwidth} keeps the default threshold: its client holds a paced
 * single-request body in memory whole.
 */
public final class UploadPlan {
    /** Bodies smaller than this say more about latency than rate, and are not measured. */
    static final long MIN_SAMPLE_BYTES = 1024 * 1024;
    static final long SINGLE_PUT_SECONDS = 4;
    /** How much of the average one new measurement moves. */
    private static final double WEIGHT = 0.3;
    /** A measured rate is kept again once it moved this share from the one kept. */
    private static final double KEEP_AFTER_CHANGE = 0.2;

    private final RemoteStoreSettings settings;
    private final boolean buffersPacedBodies;
    private final LongConsumer keepRate;
    private double rate;
    private long keptRate;
    private long pacedAt;
    private final AtomicInteger single = new AtomicInteger();
    private final AtomicInteger parted = new AtomicInteger();
    private volatile String lastSingle;
    private volatile String lastParted;

    /**
     * @param buffersPacedBodies the client reads a paced single-request body into memory (MinIO)
     * @param keepRate           told a measured rate worth keeping with the findings
     */
    UploadPlan(RemoteStoreSettings settings, boolean buffersPacedBodies, LongConsumer keepRate) {
        this.settings = settings;
        this.buffersPacedBodies = buffersPacedBodies;
        this.keepRate = keepRate;
    }

    /** Starts from a rate kept by an earlier process, unless one was measured here already. */
    synchronized void seed(OptionalLong kept) {
        if (rate == 0 && kept.isPresent()) {
            rate = kept.getAsLong();
            keptRate = kept.getAsLong();
        }
    }

    /** The pass's upload limit, bytes per second over all its uploads; 0 for none. */
    synchronized void pacedAt(long bytesPerSecond) {
        this.pacedAt = Math.max(0, bytesPerSecond);
    }

    /** A body of {@code bytes} went up in {@code nanos} (one PUT, or all its parts and the completion). */
    void measured(long bytes, long nanos) {
        if (bytes < MIN_SAMPLE_BYTES || nanos <= 0) {
            return;
        }
        double sample = bytes * 1e9 / nanos;
        long keep = 0;
        synchronized (this) {
            rate = rate == 0 ? sample : rate * (1 - WEIGHT) + sample * WEIGHT;
            if (keptRate == 0 || Math.abs(rate - keptRate) > keptRate * KEEP_AFTER_CHANGE) {
                keptRate = (long) rate;
                keep = keptRate;
            }
        }
        if (keep > 0) {
            keepRate.accept(keep);
        }
    }

    /** An upload attempt of {@code bytes} failed: the link may be worse than measured. */
    synchronized void failed(long bytes) {
        if (bytes >= MIN_SAMPLE_BYTES && rate > 0) {
            rate = rate / 2;
        }
    }

    /** The rate measured (or kept), bytes per second; 0 while unknown. */
    synchronized long rate() {
        return (long) rate;
    }

    /** The longest a single PUT may be expected to take: an eighth of the attempt timeout, at most 4 s. */
    Duration singlePutBound() {
        Duration eighth = settings.attemptTimeout().dividedBy(8);
        Duration cap = Duration.ofSeconds(SINGLE_PUT_SECONDS);
        return eighth.compareTo(cap) < 0 ? eighth : cap;
    }

    /**
     * Whether a body of {@code length} goes in parts. {@code slice}: the size its digests were taken
     * in when it was read ({@link RemoteStore#digestPlan}), which keeps the choice made then.
     */
    boolean inParts(long length, Optional<Long> slice) {
        if (settings.multipartThresholdChosen() || length <= settings.partSize()) {
            return length > settings.multipartThreshold();
        }
        if (slice.isPresent() && slice.get() > 0) {
            return slice.get() < length;
        }
        return decide(length).parts;
    }

    /** Counts a body above one part size as it goes, and why it goes so. */
    void sent(long length, boolean parts) {
        if (length <= settings.partSize()) {
            return;
        }
        Choice now = decide(length);
        String why = now.parts == parts ? now.why : "as chosen when it was read, before the upload rate measured since";
        if (parts) {
            parted.incrementAndGet();
            lastParted = why;
        } else {
            single.incrementAndGet();
            lastSingle = why;
        }
    }

    private record Choice(boolean parts, String why) {
    }

    private Choice decide(long length) {
        long threshold = settings.multipartThreshold();
        if (settings.multipartThresholdChosen()) {
            return new Choice(length > threshold, "multipart-threshold is set to " + threshold + " bytes");
        }
        long measured;
        long paced;
        synchronized (this) {
            measured = (long) rate;
            paced = pacedAt;
        }
        if (paced > 0 && buffersPacedBodies) {
            return new Choice(length > threshold, "a MinIO store under --bandwidth holds a paced single PUT in memory, "
                    + "so bodies above " + mib(threshold) + " go in parts");
        }
        if (measured <= 0) {
            return new Choice(length > threshold, "no upload rate is measured for this endpoint yet, so bodies above "
                    + mib(threshold) + " go in parts of " + mib(settings.partSize()));
        }
        long effective = paced > 0 ? Math.min(measured, paced) : measured;
        double seconds = length / (double) effective;
        Duration bound = singlePutBound();
        boolean fits = seconds <= bound.toMillis() / 1000.0;
        String at = "a body uploads at " + mib(measured) + "/s here"
                + (paced > 0 && paced < measured ? " (--bandwidth " + mib(paced) + "/s)" : "") + ", so one PUT of "
                + mib(length) + " takes " + String.format(Locale.ROOT, "%.1f", seconds) + " s, ";
        String limit = bound.toMillis() / 1000.0 + " s (an eighth of the " + settings.attemptTimeout().toSeconds()
                + " s attempt timeout, at most " + SINGLE_PUT_SECONDS + " s)";
        return fits ? new Choice(false, at + "within " + limit)
                : new Choice(true, at + "more than " + limit + ": parts of " + mib(settings.partSize()));
    }

    /** What went how and why, for a pass's summary; empty while no body above one part was sent. */
    Optional<String> explain() {
        int s = single.get();
        int p = parted.get();
        if (s == 0 && p == 0) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder();
        if (s > 0) {
            b.append(s).append(" in one PUT each (").append(lastSingle).append(')');
        }
        if (p > 0) {
            b.append(s > 0 ? "; " : "").append(p).append(" in parts (").append(lastParted).append(')');
        }
        return Optional.of(b.toString());
    }

    static String mib(long bytes) {
        if (bytes >= 1024 * 1024) {
            double m = bytes / (1024.0 * 1024);
            return (m == Math.rint(m) ? String.format(Locale.ROOT, "%.0f", m) : String.format(Locale.ROOT, "%.1f", m))
                    + " MiB";
        }
        return bytes + " bytes";
    }
}
