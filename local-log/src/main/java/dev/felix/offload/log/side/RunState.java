package dev.felix.offload.log.side;

import java.util.Objects;

/**
 * What the data root's {@code run-state} file says about the run that wrote it.
 *
 * @param state                  whether that run is (or was, when it died) running, or stopped cleanly
 * @param acknowledgesBeforeSync flags bit 0: the run acknowledges records before syncing them (fsync
 *                               mode periodic or none), so a crash of it may have lost acknowledged records
 * @param storageId              the storage id the run started under
 */
public record RunState(State state, boolean acknowledgesBeforeSync, StorageId storageId) {

    /** The {@code state} byte. */
    public enum State {
        RUNNING(1),
        STOPPED_CLEANLY(2);

        private final int code;

        State(int code) {
            this.code = code;
        }

        /** The byte stored for this state. */
        public int code() {
            return code;
        }

        /** The state stored as {@code code}, or null for a byte that names none. */
        static State ofCode(int code) {
            for (State s : values()) {
                if (s.code == code) {
                    return s;
                }
            }
            return null;
        }
    }

    public RunState {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(storageId, "storageId");
    }

    /** A run that has started under {@code storageId}. */
    public static RunState running(StorageId storageId, boolean acknowledgesBeforeSync) {
        return new RunState(State.RUNNING, acknowledgesBeforeSync, storageId);
    }

    /** The same run, stopped cleanly. */
    public RunState stoppedCleanly() {
        return new RunState(State.STOPPED_CLEANLY, acknowledgesBeforeSync, storageId);
    }

    /**
     * True when the run this file describes died while acknowledging before syncing: {@code running} with
     * flags bit 0. A start that finds this writes a new storage id before anything else.
     */
    public boolean crashedWhileAcknowledgingBeforeSync() {
        return state == State.RUNNING && acknowledgesBeforeSync;
    }
}
