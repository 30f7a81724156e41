package dev.felix.offload.daemon;

import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MeteredStoreTest {

    @TempDir
    Path tmp;

    @Test
    void countsPutsAndFailuresByKindAndOperation() throws Exception {
        DaemonMetrics metrics = new DaemonMetrics();
        try (MeteredStore store = new MeteredStore(FilesystemStore.open(tmp), metrics)) {
            store.put("a/b.segment", UploadBody.ofBytes(new byte[] {1, 2, 3}));
            assertThatThrownBy(() -> store.head("a/missing.segment")).isInstanceOf(ObjectNotFoundException.class);
            assertThat(store.abortIncompleteUploads("a/", Instant.now())).as("a filesystem store has none").isEmpty();
            assertThat(store.incompleteUploads()).as("not offered over a store without multipart uploads").isEmpty();
        }
        String text = metrics.scrape();
        assertThat(text).contains("felix_store_upload_seconds_count 1\n",
                "felix_store_errors_total{kind=\"object_not_found\",operation=\"head\"} 1.0");
    }

    @Test
    void passesIncompleteUploadsThroughToAStoreThatHasThem() throws Exception {
        Object store = Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ObjectStore.class, IncompleteUploads.class}, (proxy, method, args) -> {
                    if (method.getName().equals("incompleteUploads")) {
                        return java.util.Optional.of(proxy);
                    }
                    if (method.getName().equals("abortIncompleteUploads")) {
                        return List.of(args[0] + "x.segment");
                    }
                    if (method.getName().equals("describe")) {
                        return "a fake store";
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        MeteredStore metered = new MeteredStore((ObjectStore) store, new DaemonMetrics());
        assertThat(metered.incompleteUploads()).as("offered where the wrapped store has it").containsSame(metered);
        assertThat(metered.abortIncompleteUploads("node/", Instant.now())).containsExactly("node/x.segment");
    }

    @Test
    void kindsAreSnakeCaseWithoutTheExceptionSuffix() {
        assertThat(DaemonMetrics.kindOf(new ObjectNotFoundException("k", "k", null, null))).isEqualTo("object_not_found");
        assertThat(DaemonMetrics.kindOf(new IllegalStateException("x"))).isEqualTo("illegal_state");
    }
}
