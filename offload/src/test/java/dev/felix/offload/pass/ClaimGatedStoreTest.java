package dev.felix.offload.pass;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.RequestHold;
import dev.felix.offload.store.fs.FilesystemStore;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The claim gate is asked of the store, not found by its class: a decorator over the gate (metrics,
 * pacing) still offers its hold, so the uploader's local step before a request waits for the claim
 * check there too, and fails unsent when the check did not pass.
 */
class ClaimGatedStoreTest {

    @TempDir
    Path tmp;

    /** A decorator that changes nothing, as a metering or pacing one would wrap the gate. */
    private static final class Decorated extends ForwardingObjectStore {
        Decorated(ObjectStore store) {
            super(store);
        }
    }

    @Test
    void aDecoratorOverTheGateIsHeldUntilTheCheckPassed() throws Exception {
        ObjectStore real = FilesystemStore.open(tmp.resolve("store"));
        ClaimGatedStore gate = new ClaimGatedStore(real);
        ObjectStore decorated = new Decorated(gate);
        RequestHold hold = decorated.requestHold().orElseThrow();
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
            try {
                hold.awaitRelease();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        // the check has not ended: the wait goes on (asked again below, once it ended)
        assertThat(waiting).isNotDone();
        gate.passed(real);
        waiting.get(60, TimeUnit.SECONDS);
        assertThat(real.requestHold()).as("a store that sends at once holds nothing").isEmpty();
    }

    @Test
    void aDecoratorOverARefusedGateFailsUnsent() throws Exception {
        ClaimGatedStore gate = new ClaimGatedStore(FilesystemStore.open(tmp.resolve("store")));
        gate.failed(new IllegalStateException("refused"));
        assertThatThrownBy(() -> new Decorated(gate).requestHold().orElseThrow().awaitRelease())
                .isInstanceOf(ClaimGatedStore.NotSentException.class);
    }
}
