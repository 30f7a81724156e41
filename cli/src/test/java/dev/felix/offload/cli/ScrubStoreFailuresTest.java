package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A scrub that meets a store failing its requests (an outage: every HEAD times out) still counts each
 * entry it could not check, but says so in one log line for the pass, not one per entry: an operator
 * watching the log during an outage sees one line per pass.
 */
@org.junit.jupiter.api.parallel.Isolated("reads what the process's loggers say")
class ScrubStoreFailuresTest {

    @TempDir
    Path tmp;

    @Test
    void entriesTheStoreFailedAreCountedAndToldInOneLine() throws Exception {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "2", "--records", "600",
                "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path storeDir = Files.createDirectories(tmp.resolve("store"));
        CliRun offload = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeDir.toUri().toString());
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();

        Logger logger = (Logger) LoggerFactory.getLogger(Scrub.class);
        ListAppender<ILoggingEvent> seen = new ListAppender<>();
        seen.start();
        logger.addAppender(seen);
        try (ForwardingObjectStore down = new ForwardingObjectStore(FilesystemStore.open(storeDir)) {
            @Override
            public ObjectHead head(String key) throws StoreException {
                throw new TransientStoreException("head of key '" + key + "' failed: Read timed out", key, null, null);
            }
        }) {
            Scrub.Report r = new Scrub(new DataRoot(root), down, Map.of(), 0, Clock.systemUTC(), Scrub.Share.NONE)
                    .run(StopSignal.never(), null);
            assertThat(r.entriesChecked()).isGreaterThan(3);
            assertThat(r.anomalies()).filteredOn(a -> a.kind() == Scrub.Kind.UNREADABLE)
                    .as("every entry the store failed is counted").hasSize(r.entriesChecked());
        } finally {
            logger.detachAppender(seen);
        }
        List<String> warnings = seen.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .map(ILoggingEvent::getFormattedMessage).toList();
        assertThat(warnings).as("warnings of the pass").singleElement().asString()
                .contains("entries could not be read: the store failed the requests (first: ");
    }
}
