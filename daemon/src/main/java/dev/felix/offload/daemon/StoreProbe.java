package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreStoppedException;
import org.slf4j.Logger;

import java.io.IOException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the daemon asks its store before any pass: whether it answers (at start-up, however long it
 * takes, and again before a pass where no probe got through yet), and whether this root's node claim
 * stands there. A store that does not answer is left to the passes; a claim another root holds
 * refuses the start.
 */
final class StoreProbe {

    /** The daemon's logger: an operator reads the start-up's lines as the daemon's. */
    private static final Logger LOG = DaemonLog.LOG;

    private final MeteredStore store;
    private final StoreHealth health;
    private final DataRoot root;
    private final String keyPrefix;
    /** The node id, without creating one. */
    private final Supplier<Optional<String>> nodeId;
    /** Whether the store's capabilities are known (the start-up probe, or a later one, went through). */
    private volatile boolean probed;
    /**
     * Whether a probe was begun. Only the first says the store has not answered yet: a later one, while
     * none has gone through, leaves {@code /health} with what the last one found (a timeout, a refusal),
     * which is still the truth while the next one waits.
     */
    private volatile boolean asked;

    StoreProbe(MeteredStore store, StoreHealth health, DataRoot root, String keyPrefix,
            Supplier<Optional<String>> nodeId) {
        this.store = store;
        this.health = health;
        this.root = root;
        this.keyPrefix = keyPrefix;
        this.nodeId = nodeId;
    }

    /** A store's description up to its region: kind, bucket, prefix and endpoint ("S3 store, bucket b at URL"). */
    static String shortName(String description) {
        int region = description.indexOf(" region ");
        return region > 0 ? description.substring(0, region) : description;
    }

    /** How the claim checks of this daemon's file refuse, and whether a check replaces another root's claim. */
    static NodeClaimCheck.Policy claimPolicy(DaemonConfig config, boolean takeOver) {
        return new NodeClaimCheck.Policy(config.file + ": " + DaemonConfig.STORE, takeOver);
    }

    /**
     * Asks the store what it can do, and lists the node's prefix (one key), so that a store already
     * probed before still answers a request of its own; remembers whether it answered.
     */
    void probe() {
        MeteredStore unit = store.unit();
        if (!probed && !asked) {
            health.notReady("waiting for its first answer (asked at " + Instant.now() + ")");
        }
        asked = true;
        try (StartupWait wait = StartupWait.begin("the store to answer", shortName(store.describe())
                + "; /health answers 503 until it does")) {
            try {
                unit.capabilities();
                unit.listPage(probePrefix(), null, 1);
                if (!probed) {
                    LOG.info("store answered: {}", store.describe());
                }
                probed = true;
                wait.ended("it answered");
            } catch (StoreStoppedException e) {
                wait.ended("the daemon is stopping");
            } catch (StoreException | RuntimeException e) {
                String why = DaemonMetrics.kindOf(e) + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
                if (!StoreHealth.unavailable(e)) {
                    health.notReady(why);
                }
                wait.ended("it did not answer: " + why);
                LOG.error("store did not answer ({}): {}", shortName(store.describe()), why);
            }
        } finally {
            unit.endUnit();
        }
    }

    /** A pass needs the store's capabilities: where the start-up probe did not get them, it asks again. */
    void require() {
        if (!probed) {
            probe();
            if (!probed) {
                throw new IllegalStateException("the store did not answer: " + health.problem());
            }
        }
    }

    /** The node's prefix where the node id is known, else the store's own (an empty key prefix). */
    private String probePrefix() {
        return nodeId.get().map(id -> new SegmentKeys(keyPrefix, id).nodePrefix()).orElse("");
    }

    /**
     * Refuses to start (a usage error, exit 2) where every pass would be refused: another root's claim
     * on this node id, or a store that is not this root's. A store that does not answer is left to the
     * passes, as {@link #probe} leaves it; so is a root another process holds right now, or a root
     * without a node id yet (its first pass creates a fresh one, which no other root can hold).
     *
     * @param stopping whether the daemon is stopping: a refusal then comes of the stop cutting the store off
     */
    void checkClaim(NodeClaimCheck.Policy policy, BooleanSupplier stopping) throws IOException {
        Optional<String> id = nodeId.get();
        if (!health.ready() || id.isEmpty()) {
            return;
        }
        SegmentKeys keys = new SegmentKeys(keyPrefix, id.get());
        MeteredStore unit = store.unit();
        try (RootLock lock = RootLock.acquire(root.path());
             StartupWait wait = StartupWait.begin("the store to answer the node claim check", shortName(store.describe()))) {
            // the claim and the node's lease checked as any writer checks them; a pass takes the lease
            NodeClaimCheck.enforce(root, unit, keys, policy);
            wait.ended("checked");
        } catch (RootLock.HeldException e) {
            LOG.info("the node claim is checked by the first pass: {}", e.getMessage());
        } catch (NodeClaimCheck.RefusedException e) {
            if (stopping.getAsBoolean()) {
                return; // refused because the stop cut the store off, not because of a claim
            }
            throw new StartRefusedException(e.getMessage());
        } catch (IOException e) {
            LOG.error("{}", e.getMessage());
        } finally {
            unit.endUnit();
        }
    }
}
