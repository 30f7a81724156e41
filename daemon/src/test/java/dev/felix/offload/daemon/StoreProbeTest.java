package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.TransientStoreException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class StoreProbeTest {

    /**
     * A store that times out: while the daemon asks it again (its passes do, until one answer comes),
     * {@code /health} keeps saying what the last attempt found, not that the store was never asked.
     */
    @Test
    void whileAProbeAsksAgainHealthSaysWhatTheLastOneFound(@TempDir Path tmp) {
        StoreHealth health = new StoreHealth("a silent store");
        List<String> reasonsWhileAsked = new ArrayList<>();
        Object silent = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ObjectStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("describe")) {
                        return "a silent store";
                    }
                    if (method.getName().equals("capabilities")) {
                        reasonsWhileAsked.add(health.problem());
                        throw new TransientStoreException("read timed out after 2 s", "", null, null);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        MeteredStore store = new MeteredStore((ObjectStore) silent, new DaemonMetrics(), health);
        StoreProbe probe = new StoreProbe(store, health, new DataRoot(tmp), "", Optional::empty);

        probe.probe();
        assertThat(health.ready()).isFalse();
        assertThat(health.problem()).contains("transient_store").contains("timed out");
        probe.probe();
        probe.probe();

        assertThat(reasonsWhileAsked).hasSize(3);
        assertThat(reasonsWhileAsked.get(0)).contains("waiting for its first answer");
        assertThat(reasonsWhileAsked.subList(1, 3)).allSatisfy(reason -> assertThat(reason)
                .contains("transient_store").contains("timed out").doesNotContain("waiting for its first answer"));
        assertThat(health.problem()).contains("transient_store");
    }
}
