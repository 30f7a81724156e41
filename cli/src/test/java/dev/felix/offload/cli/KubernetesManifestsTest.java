package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.felix.offload.daemon.ConfigValues;
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
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * deploy/kubernetes and deploy/container held against what the daemon accepts: the sidecar's
 * configuration (the ConfigMap, loaded as the daemon loads it), its arguments (parsed as the command
 * line is), ports and probe paths (the listeners that configuration opens), the token file and data
 * root (mounted where the configuration says), the grace period (above the drain bound), the memory
 * (above the heap, the heap above what reads may hold), the user (the image's), the CronJob's commands;
 * and the Dockerfile against the distribution and the manifests.
 */
class KubernetesManifestsTest {

    static final Path DEPLOY = DeploymentFilesTest.REPO.resolve("deploy");
    private static final YAMLMapper YAML = YAMLMapper.builder().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();
    /** What the JVM takes besides the heap in the sidecar (metaspace, code cache, threads, direct buffers), measured. */
    static final long NON_HEAP_BYTES = 192L << 20;
    /** The daemon's live heap besides what reads hold (store clients, metrics, manifests, passes), measured. */
    static final long WORKING_SET_BYTES = 128L << 20;

    @TempDir
    Path tmp;

    static List<JsonNode> documents() throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(DEPLOY.resolve("kubernetes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(f.toFile())) {
                    while (docs.hasNext()) {
                        JsonNode d = docs.next();
                        if (d != null && !d.isEmpty()) {
                            out.add(d);
                        }
                    }
                }
            }
        }
        return out;
    }

    static JsonNode find(List<JsonNode> docs, String kind, String name) {
        return docs.stream().filter(d -> d.path("kind").asText().equals(kind) && d.path("metadata").path("name").asText()
                .equals(name)).findFirst().orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    }

    static JsonNode container(JsonNode podSpec, String name) {
        for (JsonNode c : podSpec.path("containers")) {
            if (c.path("name").asText().equals(name)) {
                return c;
            }
        }
        throw new AssertionError("no container " + name);
    }

    static Optional<String> env(JsonNode container, String name) {
        for (JsonNode e : container.path("env")) {
            if (e.path("name").asText().equals(name)) {
                return Optional.of(e.path("value").asText());
            }
        }
        return Optional.empty();
    }

    /** The volume mounted in {@code container} at the directory that holds {@code file}, and the key the file is. */
    static JsonNode volumeHolding(JsonNode podSpec, JsonNode container, Path file) {
        for (JsonNode m : container.path("volumeMounts")) {
            if (Path.of(m.path("mountPath").asText()).equals(file.getParent())) {
                for (JsonNode v : podSpec.path("volumes")) {
                    if (v.path("name").asText().equals(m.path("name").asText())) {
                        return v;
                    }
                }
            }
        }
        throw new AssertionError("nothing in " + container.path("name").asText() + " is mounted at " + file.getParent());
    }

    static String mountPath(JsonNode container, String volume) {
        for (JsonNode m : container.path("volumeMounts")) {
            if (m.path("name").asText().equals(volume)) {
                return m.path("mountPath").asText();
            }
        }
        throw new AssertionError(container.path("name").asText() + " does not mount " + volume);
    }

    private DaemonConfig sidecarConfig(List<JsonNode> docs, String configMap, String key) throws Exception {
        JsonNode cm = find(docs, "ConfigMap", configMap);
        Path file = tmp.resolve(key);
        Files.writeString(file, cm.path("data").path(key).asText(), StandardCharsets.UTF_8);
        return DaemonConfig.load(file);
    }

    private static CommandLine.ParseResult parse(List<String> args) {
        return FelixOffload.commandLine().parseArgs(args.toArray(new String[0]));
    }

    /** The Dockerfile's instructions, one logical line each, comments dropped. */
    static List<String> dockerfile() throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(DEPLOY.resolve("container/Dockerfile"), StandardCharsets.UTF_8)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                out.add(line.strip());
            }
        }
        return out;
    }

    static String instruction(String word) throws IOException {
        List<String> found = dockerfile().stream().filter(l -> l.startsWith(word + " ")).toList();
        assertThat(found).as(word).hasSize(1);
        return found.get(0).substring(word.length() + 1);
    }

    @Test
    void theSidecarRunsTheDaemonWithTheConfigurationItMountsAndProbesWhatItServes() throws Exception {
        List<JsonNode> docs = documents();
        JsonNode sts = find(docs, "StatefulSet", "felix-broker");
        JsonNode pod = sts.path("spec").path("template").path("spec");
        JsonNode sidecar = container(pod, "felix-offload");

        // The arguments are a command line the tool takes (the image's entry point is the launcher).
        assertThat(sidecar.has("command")).as("the image's ENTRYPOINT runs").isFalse();
        List<String> args = new ArrayList<>();
        sidecar.path("args").forEach(a -> args.add(a.asText()));
        CommandLine.ParseResult run = parse(args).subcommand();
        assertThat(run.commandSpec().name()).isEqualTo("run");
        Path configPath = run.matchedOptionValue("--config", (Path) null);
        JsonNode configVolume = volumeHolding(pod, sidecar, configPath);
        String configMap = configVolume.path("configMap").path("name").asText();
        DaemonConfig c = sidecarConfig(docs, configMap, configPath.getFileName().toString());

        // The data root is the volume the broker writes.
        assertThat(mountPath(sidecar, "data")).isEqualTo(c.dataDir.toString());
        assertThat(mountPath(container(pod, "broker"), "data")).isEqualTo(c.dataDir.toString());
        assertThat(sts.path("spec").path("volumeClaimTemplates").get(0).path("metadata").path("name").asText()).isEqualTo("data");

        // Probes and Prometheus go to the status listener, on the paths it serves without a credential.
        int statusPort = c.httpSecurity.statusPort().orElseThrow();
        assertThat(c.httpSecurity.statusBind()).contains("0.0.0.0");
        JsonNode port = sidecar.path("ports").get(0);
        assertThat(sidecar.path("ports")).hasSize(1);
        assertThat(port.path("containerPort").asInt()).isEqualTo(statusPort);
        String portName = port.path("name").asText();
        assertThat(sidecar.path("readinessProbe").path("httpGet").path("path").asText()).isEqualTo("/health");
        assertThat(sidecar.path("livenessProbe").path("httpGet").path("path").asText()).isEqualTo("/health/live");
        for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
            assertThat(sidecar.path(probe).path("httpGet").path("port").asText()).as(probe).isIn(portName,
                    Integer.toString(statusPort));
        }
        JsonNode annotations = sts.path("spec").path("template").path("metadata").path("annotations");
        assertThat(annotations.path("prometheus.io/port").asText()).isEqualTo(Integer.toString(statusPort));
        assertThat(annotations.path("prometheus.io/path").asText()).isEqualTo("/metrics");
        JsonNode service = find(docs, "Service", "felix-broker");
        assertThat(service.path("spec").path("ports").get(0).path("targetPort").asText()).isEqualTo(portName);
        // /read and /shards: loopback inside the pod, and the token file is the Secret both containers mount.
        assertThat(c.httpBind).isEqualTo("127.0.0.1");
        Path tokenFile = c.httpSecurity.tokenFile().orElseThrow();
        JsonNode tokenVolume = volumeHolding(pod, sidecar, tokenFile);
        String secret = tokenVolume.path("secret").path("secretName").asText();
        JsonNode secrets = find(documents(), "Secret", secret);
        assertThat(secrets.path("stringData").has(tokenFile.getFileName().toString())).isTrue();
        assertThat(mountPath(container(pod, "broker"), tokenVolume.path("name").asText())).isEqualTo(tokenFile.getParent().toString());
        for (JsonNode from : sidecar.path("envFrom")) {
            find(docs, "Secret", from.path("secretRef").path("name").asText());
        }

        // Stopping: the kubelet waits longer than the daemon's drain bound.
        assertThat(Duration.ofSeconds(pod.path("terminationGracePeriodSeconds").asLong())).isGreaterThan(c.drainBound());

        // Memory: the heap holds what reads may (the chunk cache, each read thread's 16 MiB answer)
        // and a working set measured beside it; the limit holds the heap and the JVM's own.
        long heap = ConfigValues.bytes(env(sidecar, "FELIX_OFFLOAD_HEAP").orElseThrow().replace("m", "MiB")
                .replace("g", "GiB"));
        assertThat(heap).isGreaterThanOrEqualTo(c.readHeapBound() + WORKING_SET_BYTES);
        long limit = quantity(sidecar.path("resources").path("limits").path("memory").asText());
        assertThat(limit).isGreaterThanOrEqualTo(heap + NON_HEAP_BYTES);
        assertThat(quantity(sidecar.path("resources").path("requests").path("memory").asText())).isEqualTo(limit);

        // The image's user, locked down.
        JsonNode sc = sidecar.path("securityContext");
        String user = instruction("USER");
        assertThat(sc.path("runAsUser").asText() + ":" + sc.path("runAsGroup").asText()).isEqualTo(user);
        assertThat(pod.path("securityContext").path("fsGroup").asText()).isEqualTo(user.split(":")[1]);
        assertThat(sc.path("readOnlyRootFilesystem").asBoolean()).isTrue();
        assertThat(sc.path("allowPrivilegeEscalation").asBoolean()).isFalse();
        assertThat(sc.path("capabilities").path("drop").get(0).asText()).isEqualTo("ALL");
        assertThat(mountPath(sidecar, "tmp")).isEqualTo("/tmp"); // the JVM's scratch files, root read-only
    }

    @Test
    void theCronJobRunsOneShotCommandsTheToolTakesOverTheSameConfiguration() throws Exception {
        List<JsonNode> docs = documents();
        JsonNode cron = find(docs, "CronJob", "felix-offload-broker-0");
        assertThat(cron.path("spec").path("concurrencyPolicy").asText()).isEqualTo("Forbid");
        JsonNode pod = cron.path("spec").path("jobTemplate").path("spec").path("template").path("spec");
        assertThat(pod.path("restartPolicy").asText()).isEqualTo("Never");
        JsonNode job = container(pod, "felix-offload");
        assertThat(job.path("command").get(0).asText()).isEqualTo("/bin/sh");
        String script = job.path("args").get(0).asText();
        List<String> commands = new ArrayList<>();
        String entrypoint = instruction("ENTRYPOINT").replaceAll("[\\[\\]\"]", "");
        for (String part : script.split("&&")) {
            List<String> words = new ArrayList<>(List.of(part.strip().split("\\s+")));
            assertThat(words.remove(0)).isEqualTo(entrypoint);
            CommandLine.ParseResult parsed = parse(words).subcommand();
            commands.add(parsed.commandSpec().name());
            Path config = parsed.matchedOptionValue("--config", (Path) null);
            JsonNode volume = volumeHolding(pod, job, config);
            DaemonConfig c = sidecarConfig(docs, volume.path("configMap").path("name").asText(),
                    config.getFileName().toString());
            assertThat(mountPath(job, "data")).isEqualTo(c.dataDir.toString());
        }
        assertThat(commands).containsExactly("offload", "retention");
        String claim = pod.path("volumes").findValue("claimName").asText();
        assertThat(claim).isEqualTo("data-felix-broker-0"); // the StatefulSet's claim of pod felix-broker-0
        assertThat(env(job, "FELIX_NODE_ID")).contains("felix-broker-0"); // the sidecar's id there: its pod name
        assertThat(job.path("securityContext").path("runAsUser").asText() + ":"
                + job.path("securityContext").path("runAsGroup").asText()).isEqualTo(instruction("USER"));
    }

    @Test
    void theDockerfileRunsTheDistributionAsTheManifestsExpect() throws Exception {
        // The distribution it copies is the tarball's directory, its entry point the launcher there.
        String assembly = Files.readString(DeploymentFilesTest.REPO.resolve("dist/src/assembly/dist.xml"));
        assertThat(assembly).contains("<baseDirectory>felix-offload-${project.version}</baseDirectory>");
        assertThat(instruction("COPY")).isEqualTo("felix-offload-${VERSION}/ /opt/felix-offload/");
        assertThat(instruction("ENTRYPOINT")).isEqualTo("[\"/opt/felix-offload/bin/felix-offload\"]");
        assertThat(assembly).contains("<source>src/main/bin/felix-offload</source>", "<outputDirectory>bin</outputDirectory>");
        // CMD is the daemon on the configuration path the manifests mount.
        List<String> cmd = List.of(YAML.readValue(instruction("CMD"), String[].class));
        assertThat(cmd).isEqualTo(List.of("run", "--config", "/etc/felix-offload/felix-offload.yaml"));
        assertThat(parse(cmd).subcommand().commandSpec().name()).isEqualTo("run");
        // The volume is the data root of the configurations shipped.
        DaemonConfig c = sidecarConfig(documents(), "felix-offload-config", "felix-offload.yaml");
        assertThat(instruction("VOLUME")).isEqualTo(c.dataDir.toString());
        assertThat(instruction("EXPOSE")).contains("9464/tcp", c.httpSecurity.statusPort().orElseThrow() + "/tcp");
        // The user the image runs as is the one it creates.
        Matcher m = Pattern.compile("groupadd --gid (\\d+) \\S+ && useradd --uid (\\d+) --gid (\\d+)").matcher(
                String.join("\n", dockerfile()));
        assertThat(m.find()).isTrue();
        assertThat(instruction("USER")).isEqualTo(m.group(2) + ":" + m.group(1));
        // The CDS step uses the directory ENV points the launcher to at run time.
        assertThat(dockerfile()).contains("ENV FELIX_OFFLOAD_CDS_DIR=/opt/felix-offload/lib/cds",
                "RUN FELIX_OFFLOAD_CDS_DIR=/opt/felix-offload/lib/cds /opt/felix-offload/bin/felix-offload --version");
    }

    /** A Kubernetes memory quantity: Mi, Gi, M, G or bytes. */
    static long quantity(String q) {
        Matcher m = Pattern.compile("(\\d+)(Ki|Mi|Gi|K|M|G)?").matcher(q);
        assertThat(m.matches()).as(q).isTrue();
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2) == null ? "" : m.group(2)) {
            case "Ki" -> n << 10;
            case "Mi" -> n << 20;
            case "Gi" -> n << 30;
            case "K" -> n * 1000;
            case "M" -> n * 1_000_000;
            case "G" -> n * 1_000_000_000;
            default -> n;
        };
    }
}
