package dev.felix.offload.store.remote;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The server behind a remote store: what it does with CRC32 headers, {@code Content-MD5} and
 * {@code If-None-Match}, and whether its ETags are MD5s ({@link ServerTraits}), found out once, and
 * what that means for each request.
 *
 * <p>The probe writes tiny objects (under the store's prefix, in the reserved {@code .felix-probe/}
 * folder), most of its requests at once, and deletes them again. Refusals count as "not supported";
 * throttling, 5xx and I/O failures (after the store's retries) and access denials are real failures
 * and propagate. It runs on first need, not when the store opens, so a store that is never used
 * sends nothing, and once however many threads need it at the same time.
 *
 * <p><b>Paid for once.</b> What a probe finds is kept ({@link ServerFindings}: the endpoint, bucket,
 * the server's {@code Server} header and the time, in the {@link FindingsKeep} the command gives,
 * the data root's file in practice, and in a copy in the store, {@link ServerFindingsFile#STORE_KEY})
 * and believed by later stores of the same endpoint and bucket until it is older than
 * {@link RemoteStoreSettings#probeMaxAge()} (a day by default), an operator asks for a new probe
 * ({@link ProbeOptions#reprobe()}), or an answer contradicts it ({@link #contradicted}): a server
 * answering under another {@code Server} header, a conditional put refused where the server was
 * found to ignore the condition, an ETag that is no MD5 where the server was found to answer MD5s.
 * A contradiction drops the findings (from the keep too) and the next use probes again. Before a
 * writer acts on findings it did not learn itself, it makes sure the server answering is the one
 * they were learnt from (its first answer, or one listing request).
 *
 * <p><b>Readers never write.</b> A read-only store ({@link ProbeOptions#readOnly()}: read, scrub,
 * restore) never probes: it uses kept findings, else the store's copy (one GET), else assumes the
 * server checks and keeps nothing, so objects are checked by reading them in full.
 *
 * <p>Both remote stores talk to the same kinds of servers through different client libraries; what a
 * server does does not depend on the library. So the probe, its result and the decisions drawn from
 * it (send a CRC32? ask for the stored one? believe a multipart composite? allow a create-only put?)
 * live here once, and each store only turns them into headers of its own client.
 */
public final class ServerProbe {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ServerProbe.class);


    /**
     * How long a refused probe stands before another is tried. Reads consult the traits on every
     * request; without a pause, each one would first send a probe put bound to be refused again.
     */
    static final Duration REFUSED_PROBE_PAUSE = Duration.ofMinutes(5);

    /**
     * A contradiction of what this process's own probe found does not start another probe before
     * this long: a server answering inconsistently would otherwise be probed on every request.
     */
    static final Duration OWN_PROBE_STANDS = Duration.ofMinutes(5);

    /** How often a measured upload rate is written to the keep while the store is open (and at its close). */
    static final Duration RATE_KEPT_EVERY = Duration.ofMinutes(10);

    /** What reads assume of a server they could not probe: that it keeps and checks nothing. */
    private static final ServerTraits UNKNOWN = new ServerTraits(false, false, false, false, false, false);

    /** Where the traits in use came from, for logs and summaries. */
    public enum Source {
        /** Nothing learnt yet. */
        NONE,
        /** This process probed the server. */
        PROBED,
        /** Kept by an earlier probe ({@link FindingsKeep}). */
        KEPT,
        /** The copy a writer left in the store. */
        STORE_COPY,
        /** A read-only store with nothing kept, or a refused probe: nothing assumed of the server. */
        ASSUMED
    }

    private final RemoteStoreSettings settings;
    private final CapabilityProbe.Target target;
    private final ProbeOptions options;
    private final ServerFindings.Key key;
    private final Clock clock;
    private volatile ServerTraits traits;
    /** What the traits in use came with; null while none, or where nothing is known of the server. */
    private volatile ServerFindings findings;
    private volatile Source source = Source.NONE;
    /** The server answering was seen to be the one the findings were learnt from. */
    private volatile boolean confirmed;
    /** The Server header of the latest answer; null until one arrived (or where the client cannot tell). */
    private volatile String lastIdentity;
    /** Why the findings in use were contradicted, until they are dropped. */
    private volatile String contradiction;
    private volatile long probedAtNanos;
    /** A measured upload rate is in {@link #findings} but not yet in the keep. */
    private volatile boolean rateUnkept;
    private volatile long rateKeptAtNanos;
    private boolean forceProbe;
    private volatile long probeRefusedAt;
    private volatile boolean probeRefused;

    /** @param target the store's raw operations, used by the probe on first need */
    public ServerProbe(RemoteStoreSettings settings, CapabilityProbe.Target target) {
        this(settings, target, ProbeOptions.inMemory(), Clock.systemUTC());
    }

    public ServerProbe(RemoteStoreSettings settings, CapabilityProbe.Target target, ProbeOptions options, Clock clock) {
        this.settings = settings;
        this.target = target;
        this.options = options;
        this.key = ServerFindings.Key.of(settings);
        this.clock = clock;
        this.forceProbe = options.reprobe() && !options.readOnly();
    }

    /** What the server was found to do (learning it on first use: kept findings, else a probe). */
    public ServerTraits traits() throws StoreException {
        dropIfContradicted();
        ServerTraits t = traits;
        if (t != null && (confirmed || source != Source.KEPT && source != Source.STORE_COPY || options.readOnly())) {
            return t;
        }
        synchronized (this) {
            for (int round = 0; ; round++) {
                dropIfContradicted();
                if (traits == null) {
                    learn();
                }
                if (confirmed || options.readOnly() || (source != Source.KEPT && source != Source.STORE_COPY)
                        || round > 0) {
                    return traits;
                }
                // A writer acts on findings it did not learn only once the server answering is theirs.
                if (lastIdentity == null) {
                    identify();
                }
                if (lastIdentity != null) {
                    answered(lastIdentity);
                }
                if (contradiction == null) {
                    return traits;
                }
            }
        }
    }

    /** One cheap read, so that an answer tells which server this is. */
    private void identify() throws StoreException {
        target.listFullKeys(settings.fullKey(KeyRules.RESERVED_PREFIX + "store/"));
    }

    /** Learns the traits: kept findings, the store's copy, a probe, or (read-only) nothing. Holds the lock. */
    private void learn() throws StoreException {
        Instant now = clock.instant();
        OptionalLong rate = findings != null ? findings.uploadRate() : OptionalLong.empty();
        if (!forceProbe) {
            Optional<ServerFindings> kept = kept();
            if (kept.isPresent() && !kept.get().agedAt(now, settings.probeMaxAge())) {
                use(kept.get(), Source.KEPT);
                return;
            }
            Optional<ServerFindings> copy = options.storeCopy() ? storeCopy() : Optional.empty();
            if (copy.isPresent() && !copy.get().agedAt(now, settings.probeMaxAge())) {
                ServerFindings f = kept.flatMap(k -> k.uploadRate().isPresent() ? Optional.of(k) : Optional.empty())
                        .map(k -> copy.get().withUploadRate(k.uploadRate().getAsLong())).orElse(copy.get());
                use(f, Source.STORE_COPY);
                if (!options.readOnly()) {
                    keep(f);
                }
                return;
            }
            if (kept.isPresent()) {
                rate = kept.get().uploadRate();
                LOG.info("{}: the capability probe's findings kept from {} are older than {} (probe-max-age); "
                        + "probing again", settings.describe(), kept.get().learntAt(), settings.probeMaxAge());
            }
        }
        if (options.readOnly()) {
            traits = UNKNOWN;
            findings = null;
            source = Source.ASSUMED;
            LOG.info("{}: no capability findings are kept for this store and a read-only command does not probe "
                    + "(the probe writes); reading as if the server kept no checksums, so objects are checked by "
                    + "reading them in full. An offload or the daemon keeps findings for later commands",
                    settings.describe());
            return;
        }
        ServerTraits probed = CapabilityProbe.run(target, settings);
        String identity = lastIdentity == null ? "" : lastIdentity;
        ServerFindings f = new ServerFindings(key, identity, now, probed, rate);
        use(f, Source.PROBED);
        confirmed = true;
        probedAtNanos = System.nanoTime();
        forceProbe = false;
        if (probed.md5Etags() && !etagsAreMd5s()) {
            LOG.info("{}: with SSE-KMS configured the server's ETags are not MD5s of the bytes, so no upload"
                    + " is proven by its Content-MD5 and ETag; copies are proven by a stored CRC32 or read"
                    + " back", settings.describe());
        }
        keep(f);
        if (options.storeCopy()) {
            try {
                target.put(settings.fullKey(ServerFindingsFile.STORE_KEY), ServerFindingsFile.encode(List.of(f)),
                        OptionalLong.empty(), Optional.empty(), false);
            } catch (StoreException e) {
                LOG.warn("{}: the copy of the probe's findings for read-only commands was not written: {}",
                        settings.describe(), e.getMessage());
            }
        }
    }

    private void use(ServerFindings f, Source from) {
        findings = f;
        source = from;
        confirmed = false;
        traits = f.traits();
        if (from != Source.PROBED) {
            LOG.info("{}: using the capability probe's findings learnt {} from {} ({}): {}", settings.describe(),
                    f.learntAt(), ServerFindings.describeIdentity(f.serverIdentity()),
                    from == Source.KEPT ? "kept in " + options.keep().describe() : "the store's copy", f.traits());
        }
    }

    private Optional<ServerFindings> kept() {
        try {
            return options.keep().load(key);
        } catch (IOException e) {
            LOG.warn("{}: kept capability findings not read ({}); looking further", settings.describe(),
                    e.getMessage());
            return Optional.empty();
        }
    }

    private void keep(ServerFindings f) {
        try {
            options.keep().save(f);
        } catch (IOException e) {
            LOG.warn("{}: the capability probe's findings were not kept in {} ({}); the next command probes again",
                    settings.describe(), options.keep().describe(), e.getMessage());
        }
    }

    /** The store's copy, for this key; empty when absent or unreadable. */
    private Optional<ServerFindings> storeCopy() throws StoreException {
        Optional<byte[]> bytes = target.read(settings.fullKey(ServerFindingsFile.STORE_KEY));
        if (bytes.isEmpty()) {
            return Optional.empty();
        }
        try {
            return ServerFindingsFile.decode(bytes.get()).stream().filter(f -> f.key().equals(key)).findFirst();
        } catch (ServerFindingsFile.UnreadableException e) {
            LOG.warn("{}: the store's copy of the capability findings does not decode ({}); not used",
                    settings.describe(), e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Told the {@code Server} header (empty for none) of each answer the store receives: an answer
     * from another server than the one the findings in use were learnt from contradicts them.
     */
    public void answered(String identity) {
        lastIdentity = identity;
        ServerFindings f = findings;
        if (f == null || confirmed) {
            return;
        }
        if (identity.equals(f.serverIdentity())) {
            confirmed = true;
        } else if (source == Source.KEPT || source == Source.STORE_COPY) {
            contradicted("the server answers as " + ServerFindings.describeIdentity(identity) + ", but the findings "
                    + "from " + f.learntAt() + " were learnt from " + ServerFindings.describeIdentity(f.serverIdentity()));
        }
    }

    /**
     * An answer contradicted the findings in use: they are dropped before their next use (from the
     * keep too), and learnt again (a probe; for a read-only store, nothing assumed). A contradiction
     * of this process's own recent probe is only logged: see {@link #OWN_PROBE_STANDS}.
     */
    public void contradicted(String why) {
        if (findings == null || contradiction != null) {
            return;
        }
        if (source == Source.PROBED && System.nanoTime() - probedAtNanos < OWN_PROBE_STANDS.toNanos()) {
            LOG.warn("{}: {}, contrary to what the probe found {} ago; it is probed again if this lasts",
                    settings.describe(), why, Duration.ofNanos(System.nanoTime() - probedAtNanos).toSeconds() + " s");
            return;
        }
        contradiction = why;
    }

    private void dropIfContradicted() {
        if (contradiction == null) {
            return;
        }
        synchronized (this) {
            String why = contradiction;
            if (why == null) {
                return;
            }
            contradiction = null;
            LOG.warn("{}: {}; the capability findings are dropped and learnt again before their next use",
                    settings.describe(), why);
            traits = null;
            findings = null;
            confirmed = false;
            source = Source.NONE;
            forceProbe = true;
            if (!options.readOnly()) {
                try {
                    options.keep().forget(key);
                } catch (IOException e) {
                    LOG.warn("{}: the contradicted findings could not be dropped from {}: {}", settings.describe(),
                            options.keep().describe(), e.getMessage());
                }
            }
        }
    }

    /** Where the traits in use came from. */
    public Source source() {
        return source;
    }

    /** What is known of the server now, empty before anything was learnt or where nothing could be. */
    public Optional<ServerFindings> findings() {
        return Optional.ofNullable(findings);
    }

    /** The upload rate kept with the findings in use, empty where none was measured. */
    public OptionalLong keptUploadRate() {
        ServerFindings f = findings;
        return f == null ? OptionalLong.empty() : f.uploadRate();
    }

    /**
     * Keeps a newly measured upload rate with the findings in use (a writer's): in memory now, in the
     * keep at most every {@link #RATE_KEPT_EVERY} (an upload thread should not wait for an fsync on
     * every change) and at {@link #close()}.
     */
    public void keepUploadRate(long bytesPerSecond) {
        ServerFindings f = findings;
        if (f == null || options.readOnly() || bytesPerSecond <= 0) {
            return;
        }
        findings = f.withUploadRate(bytesPerSecond);
        rateUnkept = true;
        long now = System.nanoTime();
        if (rateKeptAtNanos == 0 || now - rateKeptAtNanos > RATE_KEPT_EVERY.toNanos()) {
            close();
        }
    }

    /**
     * Keeps what is not kept yet (an upload rate measured since): the store is closing. Findings an
     * answer contradicted since their last use are dropped here, not kept: the last request of a
     * command may be the one that contradicted them, and the next command must learn them again.
     */
    public void close() {
        dropIfContradicted();
        ServerFindings f = findings;
        if (!rateUnkept || f == null || options.readOnly()) {
            return;
        }
        rateUnkept = false;
        rateKeptAtNanos = System.nanoTime();
        keep(f);
    }

    /**
     * The traits for deciding how to read. A writer's probe may be refused to credentials that may
     * only read; reads then go on as if the server kept no checksums, so callers check objects by
     * reading them in full. Nothing that writes uses this: a put still meets the refusal itself. The
     * refusal is not remembered for good, so credentials that gain the right, or a denial that was
     * passing, are probed again after {@link #REFUSED_PROBE_PAUSE}.
     */
    private ServerTraits traitsForReading() throws StoreException {
        ServerTraits t = traits;
        if (t != null) {
            return t;
        }
        if (probeRefused && System.nanoTime() - probeRefusedAt < REFUSED_PROBE_PAUSE.toNanos()) {
            return UNKNOWN;
        }
        try {
            return traits();
        } catch (AccessDeniedException e) {
            probeRefusedAt = System.nanoTime();
            probeRefused = true;
            LOG.warn("{}: the capability probe was refused ({}); reading as if the server kept no checksums, "
                    + "so objects are checked by reading them in full", settings.describe(), e.getMessage());
            return UNKNOWN;
        }
    }

    /**
     * What the store can do. Where the probe is refused this answers what reads may assume (nothing
     * beyond user metadata) rather than failing; uploads meet the refusal themselves.
     */
    public Set<StoreCapability> capabilities() throws StoreException {
        Set<StoreCapability> caps = traitsForReading().capabilities();
        if (!etagsAreMd5s()) {
            caps.remove(StoreCapability.MD5_ETAG);
        }
        return caps;
    }

    /**
     * Whether the encryption configured leaves ETags MD5s of the bytes: SSE-S3 does, SSE-KMS (and
     * customer keys, which the settings do not offer) makes them something else.
     */
    private boolean etagsAreMd5s() {
        return settings.encryption().kind() != Encryption.Kind.KMS;
    }

    /**
     * Whether upload requests carry {@code Content-MD5}: where the probe saw the server refuse a wrong
     * one, unless the CRC32 the requests carry is checked already ({@link #provesByCrc32()}): an MD5
     * would then cost a digest of every byte and prove nothing more.
     */
    public boolean sendsContentMd5() throws StoreException {
        return traits().contentMd5Verified() && !provesByCrc32();
    }

    /**
     * Whether an upload's answer proves its copy by the CRC32s it carried: uploads carry them, and
     * the probe saw the server refuse a wrong one (a server checking part CRC32s as S3 and S3Mock do;
     * {@link #trustsComposites()} relies on the same).
     */
    public boolean provesByCrc32() throws StoreException {
        return sendsCrc32() && traits().crc32Verified();
    }

    /**
     * Whether an upload's answer can prove its copy: the server checks the Content-MD5 it is sent
     * and answers the MD5 of what it stored as the ETag.
     */
    public boolean provesByContentMd5() throws StoreException {
        ServerTraits t = traits();
        return t.contentMd5Verified() && t.md5Etags() && etagsAreMd5s();
    }

    /**
     * The traits for planning what a caller computes ahead of a put ({@link RemoteStore#digestPlan}):
     * kept findings serve before the server answered at all, since a plan that turns out wrong only
     * costs the put a digest of its own. Where nothing is known yet they are learnt as for
     * {@link #traits()}.
     */
    private ServerTraits traitsForPlanning() throws StoreException {
        dropIfContradicted();
        ServerTraits t = traits;
        if (t != null) {
            return t;
        }
        synchronized (this) {
            if (traits == null) {
                learn();
            }
            return traits;
        }
    }

    /** As {@link #sendsContentMd5()}, for a plan ({@link #traitsForPlanning()}). */
    public boolean plansContentMd5() throws StoreException {
        ServerTraits t = traitsForPlanning();
        return t.contentMd5Verified() && !(plansCrc32() && t.crc32Verified());
    }

    /** As {@link #sendsCrc32()}, for a plan ({@link #traitsForPlanning()}). */
    public boolean plansCrc32() throws StoreException {
        return byMode(() -> traitsForPlanning().crc32Accepted());
    }

    /** Whether uploads carry an {@code x-amz-checksum-crc32} header. */
    public boolean sendsCrc32() throws StoreException {
        return byMode(() -> traits().crc32Accepted());
    }

    /** Whether reads and heads ask for the stored CRC32 ({@code x-amz-checksum-mode: ENABLED}). */
    public boolean asksStoredCrc32() throws StoreException {
        return byMode(() -> traitsForReading().crc32Stored());
    }

    @FunctionalInterface
    private interface ProbedAnswer {
        boolean get() throws StoreException;
    }

    /** The checksum mode decides, except in auto mode, where what the probe found does. */
    private boolean byMode(ProbedAnswer probed) throws StoreException {
        return switch (settings.checksumMode()) {
            case ALWAYS -> true;
            case WHEN_REQUIRED -> false;
            default -> probed.get();
        };
    }

    /**
     * A composite checksum is the server's word only if the server checks the CRC32s it is sent (the
     * probe saw it refuse a wrong one); otherwise it may just be a CRC of the headers the store sent.
     */
    private boolean trustsComposites() throws StoreException {
        return settings.checksumMode() != ChecksumPolicy.WHEN_REQUIRED && traitsForReading().crc32Verified();
    }

    /** Whether a key holds an object, for a head before a put. */
    @FunctionalInterface
    public interface KeyCheck {
        boolean exists(String key) throws StoreException;
    }

    /**
     * Guards a create-only put where the server would silently turn it into an overwrite: one that
     * ignores {@code If-None-Match} gives no way to tell whether the key was free. Such a put is
     * refused, unless it asks for {@link PutOptions#headFirst()}: then the key is headed first and an
     * existing object fails the put just as a 412 would. Where the server honours the header, the
     * header does the work, but for a {@code headFirst} put that goes up in parts: that is headed
     * first too, since a head costs little beside the parts, and S3Mock answered a conditional
     * completion over an existing key with 304 and had lost the existing object afterwards. A
     * single-request put whose key the caller listed absent ({@link PutOptions#listedAbsent()}) is
     * not headed: the listing was that head, taken earlier.
     *
     * @param multipart whether the body goes up as a multipart upload
     */
    public void checkCreateOnly(String key, PutOptions options, boolean multipart, KeyCheck check)
            throws StoreException {
        if (!options.createOnly()) {
            return;
        }
        boolean honoured = traits().createOnlyHonoured();
        if (honoured && !(multipart && options.headFirst())) {
            return;
        }
        String where = settings.endpoint().map(Object::toString).orElse("AWS");
        if (!options.headFirst()) {
            throw new CapabilityMissingException("create-only put of key '" + key + "' refused: the server at "
                    + where + " ignores If-None-Match", key, null, null);
        }
        if (options.listedAbsent() && !multipart) {
            return; // the caller's listing, taken while it was the key's only writer, already answered
        }
        if (check.exists(key)) {
            throw new PreconditionFailedException("put of key '" + key + "' refused: it exists (checked by a head "
                    + "before the " + (honoured ? "multipart upload" : "put, as the server at " + where
                    + " ignores If-None-Match") + ")", key, null, null);
        }
    }

    /**
     * The CRC32 a single-request upload carries: none unless uploads carry one, else the caller's,
     * computed from the body when the caller gave none.
     */
    public OptionalLong crc32ToSend(String key, UploadBody body, PutOptions options) throws StoreException {
        if (!sendsCrc32()) {
            return OptionalLong.empty();
        }
        OptionalLong crc = options.crc32();
        return crc.isPresent() ? crc : OptionalLong.of(PartedUpload.crc32(key, body, 0, body.length()));
    }

    /**
     * What head answers, from the server's answer however the client library presents it: a
     * multipart object's composite checksum becomes its whole CRC32 only as {@link PartCrc32s}
     * allows, and the part record is hidden from the caller's metadata.
     *
     * @param etag the ETag, already unquoted
     * @param metadata the user metadata, names as the server answered them
     * @param checksum the {@code x-amz-checksum-crc32} answered, null if none
     */
    public ObjectHead head(String key, long size, String etag, Map<String, String> metadata, String checksum)
            throws StoreException {
        // the probe's verdict is needed (and the probe possibly run) only when there is a composite to judge
        boolean trusted = Crc32Text.compositeFromBase64(checksum).isPresent() && trustsComposites();
        OptionalLong crc = PartCrc32s.storedCrc32(checksum, metadata, size, trusted);
        return new ObjectHead(key, size, etag, PartCrc32s.withoutRecord(metadata), crc);
    }
}
