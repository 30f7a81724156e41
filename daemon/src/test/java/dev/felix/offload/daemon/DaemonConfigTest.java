package dev.felix.offload.daemon;

import dev.felix.offload.retention.RetentionSettings;
import dev.felix.offload.retention.ShardName;
import dev.felix.offload.copy.VerifyMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DaemonConfigTest {

    @TempDir
    Path tmp;

    private Path write(String name, String text) throws Exception {
        Path file = tmp.resolve(name);
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private static final String STORE = "file:///var/tmp/felix-store";

    @Test
    void defaultsNeedOnlyTheDataRootAndTheStore() throws Exception {
        DaemonConfig c = DaemonConfig.load(write("c.yaml", "data-dir: data\nstore: " + STORE + "\n"));
        assertThat(c.dataDir).isEqualTo(tmp.resolve("data"));
        assertThat(c.verify).isEqualTo(VerifyMode.AUTO);
        assertThat(c.parallelism).isEqualTo(2);
        assertThat(c.bandwidth).isZero();
        assertThat(c.maxBytesInFlight).isEqualTo(256L << 20);
        assertThat(c.offloadSettings().maxBytesInFlight()).isEqualTo(256L << 20);
        assertThat(c.offloadSchedule).get().extracting(s -> s.expression()).isEqualTo("* * * * *");
        assertThat(c.retentionSchedule).get().extracting(s -> s.expression()).isEqualTo("*/5 * * * *");
        assertThat(c.scrubSchedule).get().extracting(s -> s.expression()).isEqualTo("0 3 * * *");
        assertThat(c.rules.defaults()).isEqualTo(RetentionSettings.defaults());
        assertThat(c.orphanGrace).isEqualTo(Duration.ofHours(1));
        assertThat(c.orphanDryRun).isFalse();
        assertThat(c.httpBind).isEqualTo("127.0.0.1");
        assertThat(c.httpPort).isEqualTo(9464);
        assertThat(c.chunkCacheBytes).isEqualTo(256L << 20);
        assertThat(c.nodeId).isEmpty();
        assertThat(c.httpReadTimeout).isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void yamlNestedYamlFlatAndPropertiesSayTheSame() throws Exception {
        DaemonConfig nested = DaemonConfig.load(write("a.yaml", String.join("\n",
                "data-dir: /srv/data",
                "store: " + STORE,
                "node-id: broker-7",
                "offload:",
                "  verify: read-back",
                "  parallelism: 4",
                "  bandwidth: 10MiB",
                "  max-bytes-in-flight: 64MiB",
                "  schedule: '*/10 * * * * ?'",
                "local:",
                "  retention:",
                "    bytes: 1GiB",
                "retention:",
                "  ms: 7d",
                "  schedule: 'off'",
                "  streams:",
                "    'acme/default/orders':",
                "      retention.ms: 86400000",
                "      local.retention.bytes: 5MB",
                "    'acme/*/*':",
                "      retention.bytes: 1TiB",
                "  shards:",
                "    special_dir:",
                "      retention.ms: -1",
                "orphans: {grace: 30m, dry-run: true}",
                "http: {port: 0}",
                "")));
        DaemonConfig flat = DaemonConfig.load(write("b.properties", String.join("\n",
                "data-dir=/srv/data",
                "store=" + STORE,
                "node-id=broker-7",
                "offload.verify=read-back",
                "offload.parallelism=4",
                "offload.bandwidth=10485760",
                "offload.max-bytes-in-flight=67108864",
                "offload.schedule=*/10 * * * * ?",
                "local.retention.bytes=1073741824",
                "retention.ms=604800000",
                "retention.schedule=off",
                "retention.streams.acme/default/orders.retention.ms=1d",
                "retention.streams.acme/default/orders.local.retention.bytes=5000000",
                "retention.streams.acme/*/*.retention.bytes=1099511627776",
                "retention.shards.special_dir.retention.ms=-1",
                "orphans.grace=PT30M",
                "orphans.dry-run=true",
                "http.port=0",
                "")));
        for (DaemonConfig c : new DaemonConfig[] {nested, flat}) {
            assertThat(c.dataDir).isEqualTo(Path.of("/srv/data"));
            assertThat(c.nodeId).contains("broker-7");
            assertThat(c.environment(Map.of("FELIX_NODE_ID", "other"))).containsEntry("FELIX_NODE_ID", "broker-7");
            assertThat(c.verify).isEqualTo(VerifyMode.READ_BACK);
            assertThat(c.parallelism).isEqualTo(4);
            assertThat(c.bandwidth).isEqualTo(10L << 20);
            assertThat(c.offloadSettings().maxBytesInFlight()).isEqualTo(64L << 20);
            assertThat(c.offloadSchedule.get().expression()).isEqualTo("*/10 * * * * ?");
            assertThat(c.retentionSchedule).isEmpty();
            assertThat(c.orphanGrace).isEqualTo(Duration.ofMinutes(30));
            assertThat(c.orphanDryRun).isTrue();
            assertThat(c.httpPort).isZero();
            assertThat(c.rules.defaults()).isEqualTo(new RetentionSettings(1L << 30, -1, -1, 7L * 86_400_000));
            RetentionSettings orders = c.rules.settingsFor(ShardName.of(
                    new dev.felix.offload.log.ShardKey("acme", "default", "orders", 0).directoryName()));
            assertThat(orders).isEqualTo(new RetentionSettings(5_000_000, -1, 1L << 40, 86_400_000));
            assertThat(c.rules.settingsFor(ShardName.of("special_dir")).retentionMs()).isEqualTo(-1);
        }
    }

    @Test
    void scrubConcurrencyAndRequestBudgetAreReadAndCheckedNamingTheKey() throws Exception {
        DaemonConfig defaults = DaemonConfig.load(write("d.yaml", "data-dir: d\nstore: " + STORE + "\n"));
        assertThat(defaults.scrubConcurrency).isEqualTo(4);
        assertThat(defaults.scrubRequestBudget).isZero();
        DaemonConfig set = DaemonConfig.load(write("s.yaml", "data-dir: d\nstore: " + STORE
                + "\nscrub:\n  concurrency: 16\n  request-budget: 5000\n"));
        assertThat(set.scrubConcurrency).isEqualTo(16);
        assertThat(set.scrubRequestBudget).isEqualTo(5000);
        for (String[] bad : new String[][] {{"scrub.concurrency=0", "scrub.concurrency: expected an integer from 1 to 64, got '0'"},
                {"scrub.concurrency=65", "scrub.concurrency: expected an integer from 1 to 64, got '65'"},
                {"scrub.request-budget=-1", "scrub.request-budget: expected an integer from 0 to 2147483647, got '-1'"},
                {"scrub.request-budget=lots", "scrub.request-budget: expected an integer from 0 to 2147483647, got 'lots'"}}) {
            Path file = write("b.properties", "data-dir=d\nstore=" + STORE + "\n" + bad[0] + "\n");
            assertThatThrownBy(() -> DaemonConfig.load(file)).as(bad[0]).isInstanceOf(ConfigException.class)
                    .hasMessageContaining(bad[1]);
        }
    }

    @Test
    void anUnknownKeyIsRefusedWithAHint() throws Exception {
        Path file = write("c.yaml", "data-dir: d\nstore: " + STORE + "\noffload:\n  paralelism: 3\n");
        assertThatThrownBy(() -> DaemonConfig.load(file)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("offload.paralelism: unknown key (did you mean offload.parallelism?)")
                .extracting(e -> ((ConfigException) e).key()).isEqualTo("offload.paralelism");
    }

    @Test
    void badValuesAreRefusedNamingTheKeyAndWhatWasExpected() throws Exception {
        String base = "data-dir=d\nstore=" + STORE + "\n";
        Map<String, String> cases = Map.ofEntries(
                Map.entry("offload.parallelism=two", "offload.parallelism: expected an integer from 1 to 1024, got 'two'"),
                Map.entry("metrics.shards=1001", "metrics.shards: expected an integer from 0 to 1000, got '1001'"),
                Map.entry("offload.verify=maybe", "offload.verify: expected auto, server-checksum, read-back or none"),
                Map.entry("offload.bandwidth=-5", "offload.bandwidth: expected a number of bytes >= 0"),
                Map.entry("offload.max-bytes-in-flight=256", "offload.max-bytes-in-flight: expected at least 1MiB (a number "
                        + "of bytes with a unit such as 256MiB), got '256'"),
                Map.entry("offload.max-bytes-in-flight=lots", "offload.max-bytes-in-flight: expected a number of bytes >= 0"),
                Map.entry("local.retention.bytes=-2", "local.retention.bytes: expected -1 (unlimited) or a number of bytes"),
                Map.entry("retention.ms=soon", "retention.ms: expected -1 (unlimited), milliseconds, or a duration"),
                Map.entry("retention.schedule=every minute", "retention.schedule: expected a 5-field Unix or 6/7-field Quartz"),
                Map.entry("orphans.grace=10", "orphans.grace: expected a duration such as"),
                Map.entry("orphans.dry-run=yes", "orphans.dry-run: expected true or false, got 'yes'"),
                Map.entry("http.port=70000", "http.port: expected an integer from 0 to 65535"),
                Map.entry("chunk-cache.bytes=1MiB", "chunk-cache.bytes: expected at least 4MiB"),
                Map.entry("retention.delete-batch-size=5000", "retention.delete-batch-size: expected an integer from 1 to 1000"),
                Map.entry("schedule.zone=Mars/Olympus", "schedule.zone: expected a time zone id"),
                Map.entry("node-id=has space", "node-id: node id from node-id holds a forbidden character"),
                Map.entry("retention.streams.acme/default.retention.ms=1", "retention.streams.acme/default: stream pattern"),
                Map.entry("retention.streams.acme/default/x.retention.hours=1", "retention.streams.acme/default/x.retention.hours: expected"),
                Map.entry("log.level=loud", "log.level: expected error, warn, info, debug or trace"),
                Map.entry("http.read.timeout=0s", "http.read.timeout: expected a duration from 1ms to 1h such as 15s, got '0s'"),
                Map.entry("http.read.timeout=2h", "http.read.timeout: expected a duration from 1ms to 1h"),
                Map.entry("http.read.timeout=soon", "http.read.timeout: expected a duration such as"),
                Map.entry("http.bind=no such host.invalid", "http.bind: expected an IP address or a host name"));
        int n = 0;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path file = write("bad" + n++ + ".properties", base + c.getKey() + "\n");
            assertThatThrownBy(() -> DaemonConfig.load(file)).as(c.getKey()).isInstanceOf(ConfigException.class)
                    .hasMessageContaining(file.toString()).hasMessageContaining(c.getValue());
        }
    }

    @Test
    void aStoreUriWithCredentialsOrAMissingRequiredKeyIsRefused() throws Exception {
        Path creds = write("c.yaml", "data-dir: d\nstore: s3://AKIA:secret@bucket/p\n");
        assertThatThrownBy(() -> DaemonConfig.load(creds)).hasMessageContaining("store:")
                .hasMessageNotContaining("secret@");
        Path missing = write("m.yaml", "store: " + STORE + "\n");
        assertThatThrownBy(() -> DaemonConfig.load(missing)).hasMessageContaining("data-dir: is required");
    }

    @Test
    void duplicatesListsAndEmptyValuesAreRefused() throws Exception {
        Path twice = write("t.yaml", "data-dir: d\nstore: " + STORE + "\noffload.verify: auto\noffload:\n  verify: none\n");
        assertThatThrownBy(() -> DaemonConfig.load(twice)).hasMessageContaining("offload.verify: is given twice");
        Path twiceProps = write("t.properties", "data-dir=d\nstore=" + STORE + "\nhttp.port=1\nhttp.port=2\n");
        assertThatThrownBy(() -> DaemonConfig.load(twiceProps)).hasMessageContaining("http.port: is given twice");
        Path list = write("l.yaml", "data-dir: d\nstore: " + STORE + "\nhttp:\n  port: [1, 2]\n");
        assertThatThrownBy(() -> DaemonConfig.load(list)).hasMessageContaining("http.port: expected a single value");
        Path empty = write("e.yaml", "data-dir: d\nstore: " + STORE + "\nnode-id:\n");
        assertThatThrownBy(() -> DaemonConfig.load(empty)).hasMessageContaining("node-id: has no value");
        Path other = write("c.json", "{}");
        assertThatThrownBy(() -> DaemonConfig.load(other)).hasMessageContaining("must end in .yaml, .yml or .properties");
    }

    @Test
    void aFileTooLargeOrNotUtf8IsRefusedBeforeItIsParsed() throws Exception {
        Path huge = tmp.resolve("huge.yaml");
        Files.write(huge, ("data-dir: d\nstore: " + STORE + "\nx: \"" + "a".repeat(ConfigFile.MAX_BYTES) + "\"\n")
                .getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> DaemonConfig.load(huge)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("huge.yaml: is larger than 1024 KiB");
        Path atTheLimit = tmp.resolve("limit.yaml");
        String head = "data-dir: d\nstore: " + STORE + "\n";
        Files.write(atTheLimit, (head + "#".repeat(ConfigFile.MAX_BYTES - head.length())).getBytes(StandardCharsets.UTF_8));
        assertThat(DaemonConfig.load(atTheLimit).dataDir).isEqualTo(tmp.resolve("d"));
        for (String name : new String[] {"latin1.yaml", "latin1.properties"}) {
            Path latin1 = tmp.resolve(name);
            Files.write(latin1, ("data-dir" + (name.endsWith("yaml") ? ": " : "=") + "d\nnode-id" + (name.endsWith("yaml") ? ": " : "=")
                    + "n\u00f6de\n").getBytes(StandardCharsets.ISO_8859_1));
            assertThatThrownBy(() -> DaemonConfig.load(latin1)).as(name).isInstanceOf(ConfigException.class)
                    .hasMessageContaining(name + ": not UTF-8: byte 0xf6 at byte " + (name.endsWith("yaml") ? 22 : 20) + " (line 2)");
        }
    }

    @Test
    void everyKeyIsDocumented() throws Exception {
        Path docs = Path.of(System.getProperty("felix.docs.dir", "../docs")).resolve("configuration.md");
        String text = Files.readString(docs, StandardCharsets.UTF_8);
        for (String key : DaemonConfig.KEYS) {
            assertThat(text).as(key).contains("| `" + key + "` |");
        }
        assertThat(text).contains("`retention.streams.<tenant/namespace/stream>.<limit key>`",
                "`retention.shards.<shard directory>.<limit key>`");
    }

    @Test
    void valueForms() {
        assertThat(ConfigValues.bytes("1GiB")).isEqualTo(1L << 30);
        assertThat(ConfigValues.bytes("5 MB")).isEqualTo(5_000_000L);
        assertThat(ConfigValues.bytes("-1")).isEqualTo(-1L);
        assertThat(ConfigValues.bytes("-1KiB")).isNull();
        assertThat(ConfigValues.bytes("1.5GiB")).isNull();
        assertThat(ConfigValues.bytes("99999999999TiB")).isNull();
        assertThat(ConfigValues.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(ConfigValues.duration("2d")).isEqualTo(Duration.ofDays(2));
        assertThat(ConfigValues.duration("PT1H30M")).isEqualTo(Duration.ofMinutes(90));
        assertThat(ConfigValues.duration("-PT1H")).isNull();
        assertThat(ConfigValues.millis("7d")).isEqualTo(7L * 86_400_000);
        assertThat(ConfigValues.millis("-1")).isEqualTo(-1L);
    }
    @Test
    void aMisspeltOverrideKeyIsRefusedWhereAStreamNameMayHoldADot() throws Exception {
        String base = "data-dir: data\nstore: " + STORE + "\n";
        assertThatThrownBy(() -> DaemonConfig.load(write("s.yaml", base
                + "retention.streams.acme/default/orders.locl.retention.ms: -1\n")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("did you mean local.retention.ms?");
        assertThatThrownBy(() -> DaemonConfig.load(write("d.yaml", base
                + "retention.shards.acme_default_orders_0-0123456789abcdef.retention.ms.retention.bytes: 1\n")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("names two keys, retention.ms and retention.bytes");
        assertThatThrownBy(() -> DaemonConfig.load(write("t.yaml", base
                + "retention.shards.acme_default_orders_0-0123456789abcdef.lcoal.retention.ms: 1\n")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("did you mean local.retention.ms?");
        // A copied shard directory (cp -a DIR DIR.bak) is listed by the data root: its override is one.
        DaemonConfig copy = DaemonConfig.load(write("c.yaml", base
                + "retention.shards.acme_default_orders_0-0123456789abcdef.bak.retention.bytes: 0\n"));
        assertThat(copy.rules.unmatched(java.util.List.of(ShardName.of("acme_default_orders_0-0123456789abcdef.bak"))))
                .isEmpty();
        // A stream whose name holds a dot, with a last word no key is near, is a stream.
        DaemonConfig dotted = DaemonConfig.load(write("v.yaml", base + "retention.streams.acme/default/orders.v2.retention.ms: 5\n"));
        assertThat(dotted.rules.unmatched(java.util.List.of(ShardName.of("acme_default_orders_v2_0-0123456789abcdef"))))
                .containsExactly("retention.streams.acme/default/orders.v2");
    }

    @Test
    void aCronExpressionThatNeverFiresIsRefusedNamingTheKey() throws Exception {
        String base = "data-dir: data\nstore: " + STORE + "\n";
        assertThatThrownBy(() -> DaemonConfig.load(write("f.yaml", base + "scrub.schedule: '0 0 30 2 *'\n")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("scrub.schedule: cron expression '0 0 30 2 *' never fires");
        assertThatThrownBy(() -> DaemonConfig.load(write("y.yaml", base + "offload.schedule: '0 0 0 1 1 ? 2020'\n")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("offload.schedule: cron expression");
        assertThat(DaemonConfig.load(write("ok.yaml", base + "offload.schedule: '0 0 29 2 *'\n")).offloadSchedule).isPresent();
    }
}
