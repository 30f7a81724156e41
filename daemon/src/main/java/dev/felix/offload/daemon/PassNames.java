package dev.felix.offload.daemon;

import java.util.List;

/** The names of the daemon's scheduled passes, as the scheduler, the metrics and {@code /health} show them. */
final class PassNames {

    static final String OFFLOAD = "offload";
    static final String RETENTION = "retention";
    static final String SCRUB = "scrub";
    /** Every pass, in the order a run of all of them takes. */
    static final List<String> ALL = List.of(OFFLOAD, RETENTION, SCRUB);

    private PassNames() {
    }
}
