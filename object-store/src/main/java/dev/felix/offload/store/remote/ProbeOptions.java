package dev.felix.offload.store.remote;

import java.util.Objects;

/**
 * How a remote store learns what its server does ({@link ServerProbe}).
 *
 * @param keep     where findings are kept between processes
 * @param readOnly the command only reads the store (read, scrub, restore): it never probes, since
 *                 the probe writes; it uses kept findings, or the copy a writer left in the store,
 *                 or else assumes the server checks and keeps nothing
 * @param reprobe  probe once now even where fresh findings are kept (an operator's request); no
 *                 effect with {@code readOnly}
 * @param storeCopy a writer's probe leaves a copy of its findings in the store
 *                 ({@link ServerFindingsFile#STORE_KEY}) and a reader looks there when nothing is kept;
 *                 off, the store holds nothing of the probe's afterwards (a library user's store)
 */
public record ProbeOptions(FindingsKeep keep, boolean readOnly, boolean reprobe, boolean storeCopy) {
    public ProbeOptions {
        Objects.requireNonNull(keep, "keep");
    }

    /** Findings kept in memory only, a writer, no forced probe: every new store probes on first need. */
    public static ProbeOptions inMemory() {
        return new ProbeOptions(FindingsKeep.inMemory(), false, false, false);
    }

    /** A command that writes to the store, its findings kept in {@code keep} and copied to the store. */
    public static ProbeOptions writer(FindingsKeep keep, boolean reprobe) {
        return new ProbeOptions(keep, false, reprobe, true);
    }

    /** A command that only reads the store, looking for findings in {@code keep}, then in the store's copy. */
    public static ProbeOptions reader(FindingsKeep keep) {
        return new ProbeOptions(keep, true, false, true);
    }
}
