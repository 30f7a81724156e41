package dev.felix.offload.it;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code run --config} refuses a configuration it cannot use at start-up: exit 2, naming the key. */
@Order(7) // the longest classes start first (see the pom): 49 s
class ConfigErrorsIT {

    @TempDir
    Path work;

    private FelixJar.Result run(String name, String text) throws Exception {
        Files.createDirectories(work.resolve("data"));
        Path config = work.resolve(name);
        Files.writeString(config, text, StandardCharsets.UTF_8);
        return FelixJar.run(work, Map.of(), name, "run", "--config", config.toString());
    }

    @Test
    void anUnknownKeyExitsTwoNamingIt() throws Exception {
        FelixJar.Result r = run("unknown.yaml", "data-dir: data\nstore: file:///tmp/felix-it\nofload:\n  schedule: '* * * * *'\n");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains("unknown.yaml: ofload.schedule: unknown key");
        assertThat(r.out()).doesNotContain("serving");
    }

    @Test
    void aBadValueExitsTwoNamingTheKeyAndWhatWasExpected() throws Exception {
        FelixJar.Result cron = run("cron.properties", "data-dir=data\nstore=file:///tmp/felix-it\nretention.schedule=every day\n");
        assertThat(cron.exitCode()).as(cron.err()).isEqualTo(2);
        assertThat(cron.err()).contains("retention.schedule: expected a 5-field Unix or 6/7-field Quartz cron expression");

        FelixJar.Result limit = run("limit.yaml", "data-dir: data\nstore: file:///tmp/felix-it\nlocal.retention.bytes: lots\n");
        assertThat(limit.exitCode()).as(limit.err()).isEqualTo(2);
        assertThat(limit.err()).contains("local.retention.bytes: expected -1 (unlimited) or a number of bytes", "got 'lots'");

        FelixJar.Result missing = run("missing.yaml", "store: file:///tmp/felix-it\n");
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("data-dir: is required");

        FelixJar.Result noRoot = run("noroot.yaml", "data-dir: nowhere\nstore: file:///tmp/felix-it\nhttp.port: 0\n");
        assertThat(noRoot.exitCode()).isEqualTo(2);
        assertThat(noRoot.err()).contains("data-dir: no directory at");
    }
}
