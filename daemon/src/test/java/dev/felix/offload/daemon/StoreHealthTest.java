package dev.felix.offload.daemon;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreStoppedException;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** felix_store_ready follows what units of work find, through {@link MeteredStore}. */
class StoreHealthTest {

    @TempDir
    Path tmp;

    @Test
    void failuresThatSayTheStoreCannotBeUsedAreToldFromAnswersAboutOneObject() {
        assertThat(StoreHealth.unavailable(new TransientStoreException("reset", null, null, null))).isTrue();
        assertThat(StoreHealth.unavailable(new ThrottledException("503", null, null, null))).isTrue();
        assertThat(StoreHealth.unavailable(new AccessDeniedException("403", null, null, null))).isTrue();
        assertThat(StoreHealth.unavailable(new ObjectNotFoundException("no bucket", null,
                new StoreAnswer(404, "NoSuchBucket"), null))).isTrue();
        assertThat(StoreHealth.unavailable(new ObjectNotFoundException("no key", "k", new StoreAnswer(404, "NoSuchKey"),
                null))).isFalse();
        assertThat(StoreHealth.unavailable(new PreconditionFailedException("412", "k", null, null))).isFalse();
        assertThat(StoreHealth.unavailable(new IntegrityRejectedException("BadDigest", "k", null, null))).isFalse();
        assertThat(StoreHealth.unavailable(new StoreStoppedException("stopping", null))).isFalse();
    }

    /** A filesystem store whose every call fails with a reset connection while {@code down} is set. */
    private ObjectStore flaky(AtomicBoolean down) throws Exception {
        ObjectStore real = FilesystemStore.open(tmp);
        return (ObjectStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ObjectStore.class},
                (proxy, method, args) -> {
                    if (down.get() && !method.getName().equals("describe") && !method.getName().equals("close")) {
                        throw new TransientStoreException(method.getName() + " failed: Connection reset", null, null, null);
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void readinessIsWhatTheLastUnitsOfWorkFound() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        DaemonMetrics metrics = new DaemonMetrics();
        StoreHealth health = new StoreHealth("a flaky store");
        MeteredStore store = new MeteredStore(flaky(down), metrics, health);
        assertThat(health.ready()).as("before anything was asked").isFalse();
        assertThat(health.lastAnswerEpochMillis()).isZero();

        MeteredStore first = store.unit();
        first.put("n/a.segment", UploadBody.ofBytes(new byte[] {1}));
        assertThat(health.ready()).as("a unit counts once it has ended").isFalse();
        first.endUnit();
        assertThat(health.ready()).isTrue();
        assertThat(health.lastAnswerEpochMillis()).isPositive();

        // A unit that began while the store worked and then met it failing: not ready at once.
        MeteredStore pass = store.unit();
        pass.head("n/a.segment");
        down.set(true);
        assertThatThrownBy(() -> pass.head("n/a.segment")).isInstanceOf(TransientStoreException.class);
        assertThat(health.ready()).isFalse();
        assertThat(health.problem()).contains("transient_store", "Connection reset");
        pass.endUnit();
        assertThat(health.ready()).as("a unit that met a failure never makes it ready").isFalse();

        // An answer about one object says the store works.
        down.set(false);
        MeteredStore read = store.unit();
        assertThatThrownBy(() -> read.head("n/missing.segment")).isInstanceOf(ObjectNotFoundException.class);
        read.endUnit();
        assertThat(health.ready()).isTrue();
        assertThat(metrics.scrape()).contains("felix_store_errors_total{kind=\"transient_store\",operation=\"head\"} 1.0");
    }

    @Test
    void aUnitWhoseAnswersCameBeforeTheLatestFailureLeavesItNotReady() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        StoreHealth health = new StoreHealth("a flaky store");
        MeteredStore store = new MeteredStore(flaky(down), new DaemonMetrics(), health);
        MeteredStore longPass = store.unit();
        longPass.put("n/a.segment", UploadBody.ofBytes(new byte[] {1}));
        down.set(true);
        MeteredStore other = store.unit();
        assertThatThrownBy(() -> other.listPage("n/", null, 1)).isInstanceOf(StoreException.class);
        other.endUnit();
        longPass.endUnit(); // its only answer is older than the failure another unit met
        assertThat(health.ready()).isFalse();
    }

    @Test
    void afterAStopNoCallStartsAndNoneCountsAsAFailureOfTheStore() throws Exception {
        DaemonMetrics metrics = new DaemonMetrics();
        StoreHealth health = new StoreHealth("fs");
        MeteredStore store = new MeteredStore(FilesystemStore.open(tmp), metrics, health);
        MeteredStore unit = store.unit();
        unit.put("n/a.segment", UploadBody.ofBytes(new byte[] {1}));
        unit.endUnit();
        store.stopRequests();
        assertThatThrownBy(() -> store.unit().head("n/a.segment")).isInstanceOf(StoreStoppedException.class);
        assertThat(health.ready()).isTrue();
        assertThat(metrics.scrape()).doesNotContain("store_stopped");
        assertThat(store.abortOpenUploads()).as("a filesystem store has no uploads to abort").isEmpty();
    }
}
