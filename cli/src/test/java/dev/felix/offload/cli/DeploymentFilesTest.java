package dev.felix.offload.cli;

import dev.felix.offload.daemon.DaemonConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The files operators deploy with, held against what the tool accepts: the distribution's example
 * configuration (every key the daemon knows, each with a value it takes) and the systemd unit (the
 * command and options it runs, the exit code it will not restart on, a stop timeout above the
 * daemon's drain bound, its hardening).
 */
class DeploymentFilesTest {

    static final Path REPO = Path.of(System.getProperty("felix.repo.dir", "..")).toAbsolutePath().normalize();
    static final Path EXAMPLE = REPO.resolve("dist/src/main/config/felix-offload.yaml");
    static final Path UNIT = REPO.resolve("dist/src/main/systemd/felix-offload.service");

    /** A setting line of the example, set ({@code key: value}) or left at its default ({@code #key: value}). */
    private static final Pattern SETTING = Pattern.compile("^#?([a-z][^\\s:#]*):\\s*(.+)$");

    @TempDir
    Path tmp;

    private static Map<String, String> exampleSettings() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(EXAMPLE, StandardCharsets.UTF_8)) {
            Matcher m = SETTING.matcher(line);
            if (m.matches()) {
                assertThat(out.put(m.group(1), m.group(2))).as("%s is given once", m.group(1)).isNull();
            }
        }
        return out;
    }

    @Test
    void theExampleConfigurationHasEveryKeyAndNothingElse() throws Exception {
        Set<String> keys = exampleSettings().keySet();
        assertThat(keys).containsAll(DaemonConfig.keys());
        List<String> unknown = new ArrayList<>(keys);
        unknown.removeAll(DaemonConfig.keys());
        assertThat(unknown).allSatisfy(k -> assertThat(k).matches("retention\\.(streams|shards)\\..+"));
        assertThat(unknown).anyMatch(k -> k.startsWith("retention.streams.")).anyMatch(k -> k.startsWith("retention.shards."));

        // Every line's `#` removed, the file is one the daemon takes: each value shown has the right form.
        String all = String.join("\n", Files.readAllLines(EXAMPLE, StandardCharsets.UTF_8).stream()
                .map(l -> SETTING.matcher(l).matches() && l.startsWith("#") ? l.substring(1) : l).toList()) + "\n";
        Path uncommented = tmp.resolve("felix-offload.yaml");
        Files.writeString(uncommented, all, StandardCharsets.UTF_8);
        DaemonConfig c = DaemonConfig.load(uncommented);
        assertThat(c.httpSecurity.tls()).isTrue();
        // As shipped (only data-dir and store set) it loads too, and its defaults are the daemon's.
        DaemonConfig shipped = DaemonConfig.load(EXAMPLE);
        assertThat(shipped.dataDir).isEqualTo(Path.of("/var/lib/felix/data"));
        assertThat(shipped.httpBind).isEqualTo(c.httpBind).isEqualTo("127.0.0.1");
        assertThat(shipped.shutdownGrace).isEqualTo(c.shutdownGrace);
        assertThat(shipped.logLevel).isEqualTo(c.logLevel);
        assertThat(shipped.scrubReadBandwidth).isEqualTo(c.scrubReadBandwidth);
    }

    /** The unit's [Section] key=value lines; a key given twice keeps every value. */
    static Map<String, List<String>> unit(Path file) throws IOException {
        Map<String, List<String>> out = new LinkedHashMap<>();
        String section = "";
        for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
                continue;
            }
            if (line.startsWith("[")) {
                section = line.substring(1, line.indexOf(']'));
                continue;
            }
            int eq = line.indexOf('=');
            out.computeIfAbsent(section + "." + line.substring(0, eq).strip(), k -> new ArrayList<>())
                    .add(line.substring(eq + 1).strip());
        }
        return out;
    }

    static String one(Map<String, List<String>> unit, String key) {
        assertThat(unit.get(key)).as(key).hasSize(1);
        return unit.get(key).get(0);
    }

    /** systemd's time span: a number with s, min, ms, h (or none: seconds). */
    static Duration timeSpan(String text) {
        Matcher m = Pattern.compile("(\\d+)\\s*(ms|s|sec|min|m|h)?").matcher(text.strip());
        assertThat(m.matches()).as(text).isTrue();
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "min", "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofSeconds(n);
        };
    }

    @Test
    void theSystemdUnitRunsTheDaemonAsTheToolAcceptsIt() throws Exception {
        Map<String, List<String>> u = unit(UNIT);
        List<String> exec = List.of(one(u, "Service.ExecStart").split("\\s+"));
        assertThat(exec.get(0)).endsWith("/bin/felix-offload");
        assertThat(exec.get(1)).isEqualTo("run");
        CommandLine.ParseResult parsed = FelixOffload.commandLine().parseArgs(exec.subList(1, exec.size()).toArray(new String[0]));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("run");
        assertThat(parsed.subcommand().matchedOptionValue("--config", (Path) null))
                .isEqualTo(Path.of("/etc/felix-offload/felix-offload.yaml"));

        assertThat(one(u, "Service.Type")).isIn("exec", "notify");
        assertThat(one(u, "Service.Restart")).isEqualTo("on-failure");
        assertThat(timeSpan(one(u, "Service.RestartSec"))).isPositive();
        // Exit 2 is a configuration the daemon refused: never restarted. Out of memory (4) and I/O (3) are.
        Set<String> noRestart = new LinkedHashSet<>(List.of(one(u, "Service.RestartPreventExitStatus").split("\\s+")));
        assertThat(noRestart).contains(Integer.toString(FelixOffload.EXIT_USAGE))
                .doesNotContain(Integer.toString(FelixOffload.EXIT_OUT_OF_MEMORY), Integer.toString(FelixOffload.EXIT_IO),
                        Integer.toString(FelixOffload.EXIT_CORRUPT));
        assertThat(u).containsKeys("Unit.StartLimitIntervalSec", "Unit.StartLimitBurst");

        // The stop timeout covers the drain bound of the configuration it runs (the example's defaults).
        DaemonConfig c = DaemonConfig.load(EXAMPLE);
        assertThat(timeSpan(one(u, "Service.TimeoutStopSec"))).isGreaterThan(c.drainBound());
        assertThat(one(u, "Service.KillSignal")).isEqualTo("SIGTERM");

        // Hardening: its own user, read-only but for the data root.
        assertThat(one(u, "Service.User")).isNotIn("root", "0");
        assertThat(one(u, "Service.NoNewPrivileges")).isEqualTo("yes");
        assertThat(one(u, "Service.ProtectSystem")).isEqualTo("strict");
        assertThat(one(u, "Service.PrivateTmp")).isEqualTo("yes");
        assertThat(one(u, "Service.ReadWritePaths")).isEqualTo(c.dataDir.toString());
        assertThat(u).doesNotContainKey("Service.MemoryDenyWriteExecute"); // the JIT writes code
        assertThat(one(u, "Service.EnvironmentFile")).endsWith("/etc/felix-offload/felix-offload.env");
        assertThat(one(u, "Service.CacheDirectory")).isEqualTo("felix-offload");
        // The launcher takes the heap from the environment; the value has the form it checks.
        assertThat(u.get("Service.Environment")).anySatisfy(e -> assertThat(e).matches("FELIX_OFFLOAD_HEAP=\\d+[mg]"));
        assertThat(Files.readString(REPO.resolve("dist/src/main/systemd/felix-offload.sysusers")))
                .contains("u " + one(u, "Service.User") + " ", "g " + one(u, "Service.Group") + " ");
    }
}
