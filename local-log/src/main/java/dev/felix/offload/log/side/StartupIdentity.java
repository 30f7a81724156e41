package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;

import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The data root's start-up rule for its identity: whether a start keeps the storage id or writes a
 * new one, and the writes that follow, in the order that keeps the rule true across a crash.
 *
 * <p>A new storage id is written, before anything else, when:
 * <ol>
 *   <li>there is none: the directory is opened for the first time;</li>
 *   <li>{@code run-state} says {@code running} with flags bit 0: the last run died while it
 *       acknowledged records before syncing them, so records it acknowledged may be lost;</li>
 *   <li>the control plane's incarnation for this node is ahead of {@code registration}: the directory
 *       is older than the node's last registration, as a restored volume snapshot is (only when the
 *       caller asked the control plane; an absent {@code registration} gives no evidence either way).</li>
 * </ol>
 *
 * <p>{@link #begin} then writes {@code storage-id} (when renewing) and only after it {@code run-state}
 * ({@code running}, naming the id and this run's flag). The order matters: had {@code run-state} been
 * replaced first, a crash between the two writes would leave a run state that no longer asks for a
 * new id, and the renewal would be lost. A caller that records a new registration writes
 * {@code registration} after the storage id for the same reason.
 */
public final class StartupIdentity {

    /** Why a start writes a new storage id. */
    public enum Reason {
        /** The root has no {@code storage-id}. */
        NO_STORAGE_ID,
        /** {@code run-state} is {@code running} with flags bit 0: the last run crashed acknowledging before syncing. */
        CRASHED_WHILE_ACKNOWLEDGING_BEFORE_SYNC,
        /** The control plane's incarnation is ahead of {@code registration}. */
        REGISTRATION_BEHIND
    }

    /**
     * What a start does with the identity.
     *
     * @param existing the storage id found, if any
     * @param renewal  why a new storage id is written; empty when {@code existing} is kept
     */
    public record Decision(Optional<StorageId> existing, Optional<Reason> renewal) {

        public Decision {
            Objects.requireNonNull(existing, "existing");
            Objects.requireNonNull(renewal, "renewal");
            if (renewal.isEmpty() && existing.isEmpty()) {
                throw new IllegalArgumentException("without a storage id a start must write one");
            }
        }

        /** True when the start writes a new storage id before anything else. */
        public boolean writesNewStorageId() {
            return renewal.isPresent();
        }
    }

    /** Reports each step of each file {@link #begin} writes; for crash tests. */
    @FunctionalInterface
    interface FileSteps {
        void completed(String fileName, DurableFiles.Step step) throws IOException;
    }

    private StartupIdentity() {
    }

    /** The rule, from the root's {@code storage-id} and {@code run-state} as loaded. */
    public static Decision decide(Optional<StorageId> storageId, Optional<RunState> runState) {
        return decide(storageId, runState, Optional.empty(), OptionalLong.empty());
    }

    /**
     * The rule, also against the control plane's current incarnation for this node when the caller
     * asked for it ({@code controlPlaneIncarnation} empty when it did not, as for a broker outside a
     * cluster).
     */
    public static Decision decide(Optional<StorageId> storageId, Optional<RunState> runState,
                                  Optional<Registration> registration, OptionalLong controlPlaneIncarnation) {
        if (storageId.isEmpty()) {
            return new Decision(storageId, Optional.of(Reason.NO_STORAGE_ID));
        }
        if (runState.isPresent() && runState.get().crashedWhileAcknowledgingBeforeSync()) {
            return new Decision(storageId, Optional.of(Reason.CRASHED_WHILE_ACKNOWLEDGING_BEFORE_SYNC));
        }
        if (controlPlaneIncarnation.isPresent() && registration.isPresent()
                && registration.get().isBehind(controlPlaneIncarnation.getAsLong())) {
            return new Decision(storageId, Optional.of(Reason.REGISTRATION_BEHIND));
        }
        return new Decision(storageId, Optional.empty());
    }

    /**
     * Loads {@code storage-id} and {@code run-state}, applies {@link #decide(Optional, Optional)} and
     * {@link #begin(Path, Decision, boolean, SecureRandom)}: a start outside a cluster.
     *
     * @return the storage id this run starts under
     * @throws CorruptionException when either file is present and does not decode; nothing is written then
     */
    public static StorageId begin(Path root, boolean acknowledgesBeforeSync, SecureRandom random)
            throws IOException, CorruptionException {
        Decision decision = decide(StorageIdFile.FILE.load(root), RunStateFile.FILE.load(root));
        return begin(root, decision, acknowledgesBeforeSync, random);
    }

    /**
     * Carries out {@code decision}: when it renews, a new random 16-byte id is saved as
     * {@code storage-id} first; then {@code run-state} is saved as {@code running} under the id, with
     * flags bit 0 set when this run acknowledges before syncing. Both writes are durable on return.
     *
     * @return the storage id this run starts under
     */
    public static StorageId begin(Path root, Decision decision, boolean acknowledgesBeforeSync, SecureRandom random)
            throws IOException {
        return begin(root, decision, acknowledgesBeforeSync, random, (file, step) -> { });
    }

    static StorageId begin(Path root, Decision decision, boolean acknowledgesBeforeSync, SecureRandom random,
                           FileSteps steps) throws IOException {
        Objects.requireNonNull(random, "random");
        StorageId id;
        if (decision.writesNewStorageId()) {
            id = StorageId.random(random);
            StorageIdFile.FILE.save(root, id, step -> steps.completed(StorageIdFile.FILE_NAME, step));
        } else {
            id = decision.existing().orElseThrow();
        }
        RunStateFile.FILE.save(root, RunState.running(id, acknowledgesBeforeSync),
                step -> steps.completed(RunStateFile.FILE_NAME, step));
        return id;
    }

    /** Records a clean stop of the run that started under {@code storageId}, durably. */
    public static void end(Path root, StorageId storageId, boolean acknowledgesBeforeSync) throws IOException {
        RunStateFile.FILE.save(root, RunState.running(storageId, acknowledgesBeforeSync).stoppedCleanly());
    }
}
