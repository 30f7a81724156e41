package dev.felix.offload.daemon;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's log: its start-up, its passes and its stop are told under one logger name, that of
 * {@code Daemon} (operators' filters and alerts know it), whichever class of the daemon tells them.
 * Named by its text so that the classes split out of {@code Daemon} need not refer back to it.
 */
final class DaemonLog {

    static final Logger LOG = LoggerFactory.getLogger("dev.felix.offload.daemon.Daemon");

    private DaemonLog() {
    }
}
