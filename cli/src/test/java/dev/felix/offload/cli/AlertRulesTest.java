package dev.felix.offload.cli;

import dev.felix.offload.daemon.Daemon;
import dev.felix.offload.daemon.DaemonConfig;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/alerts' rules against the daemon as it starts: every metric they name is one /metrics shows
 * before any pass has run, and every counter is there at zero (so {@code increase()} sees the first
 * event), with each label value an alert filters on.
 */
class AlertRulesTest {

    private static final Path RULES = Path.of("..", "docs", "alerts", "felix-offload.rules.yml");
    private static final Pattern METRIC = Pattern.compile("\\bfelix_[a-z0-9_]+");

    @TempDir
    Path tmp;

    @Test
    void everyMetricTheRulesUseIsExposedFromStartUpAndEveryCounterStartsAtZero() throws Exception {
        String rules = Files.readString(RULES, StandardCharsets.UTF_8);
        Set<String> used = new TreeSet<>();
        for (String line : rules.lines().filter(l -> l.trim().startsWith("expr:")).toList()) {
            Matcher m = METRIC.matcher(line);
            while (m.find()) {
                used.add(m.group());
            }
        }
        assertThat(used).as("metrics the rules use").contains("felix_offload_lag_bytes", "felix_pass_runs_total",
                "felix_store_errors_total", "felix_scrub_anomalies_total", "felix_offload_collisions_total");

        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--records", "100");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path storeDir = Files.createDirectories(tmp.resolve("store"));
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", storeDir.toUri().toString());
        values.put("node-id", "alerts-test");
        values.put("offload.schedule", "off");
        values.put("retention.schedule", "off");
        values.put("scrub.schedule", "off");
        values.put("http.port", "0");
        Daemon daemon = new Daemon(DaemonConfig.of(tmp.resolve("felix.yaml"), values), FilesystemStore.open(storeDir),
                Map.of(), PassClock.system(ZoneOffset.UTC));
        daemon.start();
        String metrics;
        try {
            metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + daemon.httpPort() + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } finally {
            daemon.stop(Duration.ofSeconds(10));
        }

        Set<String> exposed = new TreeSet<>();
        for (String line : metrics.lines().filter(l -> l.startsWith("# TYPE ")).toList()) {
            exposed.add(line.split(" ")[2]);
        }
        for (String name : used) {
            assertThat(exposed).as("the daemon exposes " + name + " (rules: " + RULES + ")").contains(name);
        }
        // Every counter is there at zero before anything happened, each label value the rules care about too.
        assertThat(metrics).contains(
                "felix_pass_runs_total{pass=\"offload\",status=\"failed\"} 0.0",
                "felix_pass_runs_total{pass=\"scrub\",status=\"abandoned\"} 0.0",
                "felix_store_errors_total{kind=\"access_denied\",operation=\"put\"} 0.0",
                "felix_store_errors_total{kind=\"throttled\",operation=\"get\"} 0.0",
                "felix_scrub_anomalies_total{kind=\"crc-mismatch\"} 0.0",
                "felix_scrub_anomalies_total{kind=\"missing\"} 0.0",
                "felix_retention_deleted_segments_total{where=\"remote\"} 0.0",
                "felix_orphans_found_total 0.0",
                "felix_offload_collisions_total 0.0",
                "felix_scrub_entries_checked_total 0.0");
        for (String line : metrics.lines().filter(l -> !l.startsWith("#") && l.contains("_total")).toList()) {
            String name = line.substring(0, line.indexOf(line.contains("{") ? '{' : ' '));
            if (name.startsWith("felix_chunk_cache") || name.startsWith("felix_remote_read")) {
                continue; // read from the cache and readers, which have done nothing: 0 as well
            }
            assertThat(line).as("a counter before any pass").endsWith(" 0.0");
        }
    }
}
