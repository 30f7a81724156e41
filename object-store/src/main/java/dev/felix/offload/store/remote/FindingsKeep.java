package dev.felix.offload.store.remote;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where {@link ServerFindings} are kept between processes: the data root's file in practice
 * ({@code dev.felix.offload.root.StoreFindingsFile}), so that a later command or a restarted
 * daemon reuses what a probe learnt instead of probing again.
 */
public interface FindingsKeep {
    /** The findings kept for {@code key}, whatever their age; empty when none (or none readable). */
    Optional<ServerFindings> load(ServerFindings.Key key) throws IOException;

    /** Keeps {@code findings} in place of any for their key. */
    void save(ServerFindings findings) throws IOException;

    /** Drops what is kept for {@code key}: it was contradicted. */
    void forget(ServerFindings.Key key) throws IOException;

    /** Where, for logs. */
    String describe();

    /** Nothing kept beyond this process: every process probes again (what library users and tests get). */
    static FindingsKeep inMemory() {
        Map<ServerFindings.Key, ServerFindings> kept = new ConcurrentHashMap<>();
        return new FindingsKeep() {
            @Override
            public Optional<ServerFindings> load(ServerFindings.Key key) {
                return Optional.ofNullable(kept.get(key));
            }

            @Override
            public void save(ServerFindings findings) {
                kept.put(findings.key(), findings);
            }

            @Override
            public void forget(ServerFindings.Key key) {
                kept.remove(key);
            }

            @Override
            public String describe() {
                return "this process's memory";
            }
        };
    }
}
