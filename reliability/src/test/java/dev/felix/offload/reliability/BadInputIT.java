package dev.felix.offload.reliability;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.InvalidKeyException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad input, gathered in one place: malformed configuration files, store URIs, credentials and
 * endpoints, shard names, a manifest holding a key that climbs out of the store, and counts and
 * lengths far past anything real, each given to the command as an operator would give it.
 *
 * <p>Every case must end with the exit code the command's contract names (2 for a usage or
 * configuration mistake, 1 for damaged data or a store that refused), an error naming what was
 * wrong (the setting, or the file and byte), no stack trace, and nothing changed: the data roots,
 * the store and the files next to the store compare equal, file by file and object by object,
 * before and after (see {@link World}). All cases run, and every broken promise is reported
 * together at the end of each test.
 *
 * <p>A case runs inside the test JVM ({@link Felix#inside}) unless it asks something of the process itself
 * (JVM options, another user, an environment the tool does not read through its own), or is a daemon
 * whose configuration is taken. The first case of each kind that runs inside also runs as the real
 * process, under the same assertions, so that every kind is seen answered by the jar itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputIT {

    /**
     * What a retention pass that ran may change in its root besides what it deletes: the orphan sweep's
     * journal of pending writes (pruned, or created empty by a full listing) and the time of its last full
     * listing ({@code offload.sweep}).
     */
    private static final List<String> SWEEP_BOOKKEEPING = List.of(
            "new: data/" + dev.felix.offload.root.PendingKeysFile.FILE_NAME + " ",
            "changed: data/" + dev.felix.offload.root.PendingKeysFile.FILE_NAME + " ",
            "new: data/offload.sweep ");

    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    private Path dir;
    /** Two shards of two streams, offloaded to {@link #storeDir} with three segments kept locally. */
    private Path root;
    private Path storeDir;
    private String store;
    /** Where a key climbing out of the store with {@code ..} would land: beside the store. */
    private Path outside;
    private List<Path> shards;
    private World world;
    private final Map<String, Integer> tally = new TreeMap<>();

    /** The root's memory of the node's lease, so a copy of it counts as the same root (it never writes). */
    private void copyLease(Path copy) throws Exception {
        Path lease = root.resolve(dev.felix.offload.root.NodeLease.FILE_NAME);
        if (Files.exists(lease)) {
            Files.copy(lease, copy.resolve(lease.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    @BeforeAll
    void offloadedRoot() throws Exception {
        dir = Props.work().resolve("bad-input");
        CrashCampaign.deleteTree(dir);
        Files.createDirectories(dir);
        root = dir.resolve("data");
        storeDir = dir.resolve("store");
        outside = dir.resolve("outside");
        Files.createDirectories(outside);
        store = storeDir.toUri().toString();
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", root.toString(), "--streams", "2", "--records",
                "2000", "--payload-bytes", "200", "--segment-bytes", "65536"));
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "offload", "--data-dir", root.toString(), "--store", store,
                "--keep-local-segments", "3"));
        shards = new DataRoot(root).streamShards().stream().map(DataRoot.Shard::directory).toList();
        assertThat(shards).hasSize(2);
        assertThat(ManifestStore.read(shards.get(0)).entries()).hasSizeGreaterThan(3);
        world = new World().dir("data", root).dir("store", storeDir).dir("outside", outside);
    }

    @AfterAll
    void summary() {
        Props.summary("bad input: " + tally.values().stream().mapToInt(Integer::intValue).sum() + " cases ("
                + tally.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "))
                + "), each refused with its exit code and an error naming the setting or the file and byte, no stack"
                + " trace, and every data root, store and file beside the store unchanged");
    }

    private static void ok(Felix.Result r) {
        assertThat(r.exit()).as(r.describe()).isZero();
    }

    /** One bad input: what the process must answer, and that the world is as it was. */
    private final class Cases {
        final String category;
        final SoftAssertions soft = new SoftAssertions();
        World world = BadInputIT.this.world;
        Map<String, String> env = Map.of();
        List<String> jvm = List.of();
        /** A command the java command runs under (another user's identity, say); none by default. */
        List<String> wrapper = List.of();
        /** Run after the "before" snapshot and after the process ended, before the "after" one (a chmod and its undoing). */
        IoAction beforeRun = () -> { };
        IoAction afterRun = () -> { };
        /**
         * Changes a case's process may make, by the start of their line in {@link World#differences}: none but
         * where a case says so (a pass that wrote to the store before it failed holds the node's lease, and its
         * root remembers that in offload.lease).
         */
        List<String> mayChange = List.of();
        /** Whether a case of this kind has run both inside the test JVM and as a process yet. */
        private boolean seenAsProcess;

        Cases(String category) {
            this.category = category;
        }

        Felix.Result expect(int exit, List<String> says, String... args) throws Exception {
            boolean process = !jvm.isEmpty() || !wrapper.isEmpty() || !Felix.insideHonours(env);
            Felix.Result r = once(process, exit, says, args);
            if (!process && !seenAsProcess) {
                seenAsProcess = true;
                Felix.Result p = once(true, exit, says, args);
                soft.assertThat(p.exit()).as("felix-offload " + String.join(" ", args) + ": the process's exit and the"
                        + " run's inside the test JVM").isEqualTo(r.exit());
            }
            tally.merge(category, 1, Integer::sum);
            return r;
        }

        private Felix.Result once(boolean process, int exit, List<String> says, String... args) throws Exception {
            String what = "felix-offload " + String.join(" ", args) + (process ? "" : " (inside the test JVM)");
            Map<String, String> before = world.snapshot();
            Felix.Result r;
            beforeRun.run();
            if (process) {
                try (Felix.Running p = Felix.start(dir, env, wrapper, jvm, true, List.of(args))) {
                    r = p.await(TIMEOUT, what);
                } finally {
                    afterRun.run();
                }
            } else {
                try {
                    r = Felix.inside(dir, env, TIMEOUT, args);
                } finally {
                    afterRun.run();
                }
            }
            String all = r.out() + r.err();
            soft.assertThat(r.exit()).as(what + ": exit (" + r.describe() + ")").isEqualTo(exit);
            for (String s : says) {
                soft.assertThat(all).as(what + ": the error names " + s).contains(s);
            }
            soft.assertThat(r.err()).as(what + ": a stack trace").doesNotContain("\tat ", "Exception in thread");
            soft.assertThat(World.differences(before, world.snapshot()).stream()
                    .filter(d -> mayChange.stream().noneMatch(d::startsWith)).toList()).as(what + ": what changed").isEmpty();
            return r;
        }

        void done() {
            soft.assertAll();
        }
    }

    /** Something done to the world around a case's process. */
    private interface IoAction {
        void run() throws IOException;
    }

    private Path config(String name, String text) throws IOException {
        Path file = Files.createDirectories(dir.resolve("configs")).resolve(name);
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    /** The two required keys, the HTTP port left to the system, then {@code more}. */
    private String base(String more) {
        return "data-dir: " + root + "\nstore: " + store + "\nhttp.port: 0\n" + more + "\n";
    }

    @Test
    void malformedConfigurationFilesStopEveryCommandBeforeItTouchesAnything() throws Exception {
        Cases c = new Cases("configuration");
        record Bad(String name, String text, String says) {
        }
        String over = "x".repeat(1024 * 1024);
        List<Bad> bad = new ArrayList<>(List.of(
                new Bad("word.yaml", base("offload.parallelism: two"), "offload.parallelism: expected an integer from 1 to 1024, got 'two'"),
                new Bad("zero.yaml", base("offload.parallelism: 0"), "offload.parallelism: expected an integer from 1 to 1024"),
                new Bad("huge-int.yaml", base("offload.parallelism: 99999999999999999999"), "offload.parallelism: expected an integer"),
                new Bad("typo.yaml", base("offload.paralelism: 2"), "offload.paralelism: unknown key (did you mean offload.parallelism?)"),
                new Bad("syntax.yaml", base("offload: [a, b"), "not valid YAML"),
                new Bad("no-data-dir.yaml", "store: " + store + "\n", "data-dir: is required"),
                new Bad("no-store.yaml", "data-dir: " + root + "\n", "store: is required"),
                new Bad("empty.yaml", "", "data-dir: is required"),
                new Bad("other.toml", "data-dir = \"" + root + "\"\n", "must end in .yaml, .yml or .properties"),
                new Bad("huge-bytes.yaml", base("retention.bytes: 99999999999999TiB"), "retention.bytes: expected -1 (unlimited) or a number of bytes"),
                new Bad("long-overflow.yaml", base("retention.bytes: 9223372036854775808"), "retention.bytes: expected -1"),
                new Bad("cron.yaml", base("offload.schedule: \"61 * * * *\""), "offload.schedule: expected a 5-field Unix"),
                new Bad("zone.yaml", base("schedule.zone: Mars/Olympus"), "schedule.zone: expected a time zone id"),
                new Bad("node-id-path.yaml", base("node-id: ../../etc"), "node-id: node id from node-id holds a forbidden character"),
                new Bad("node-id-long.yaml", base("node-id: " + "n".repeat(200)), "node-id: node id from node-id is longer than 128 bytes"),
                new Bad("port.yaml", base("http.port: 70000").replace("http.port: 0\n", ""), "http.port: expected an integer from 0 to 65535"),
                new Bad("bind.yaml", base("http.bind: 999.1.1.1"), "http.bind: expected an IP address"),
                new Bad("duration.yaml", base("retention.ms: 7 days"), "retention.ms: expected -1 (unlimited), milliseconds, or a duration"),
                new Bad("grace.yaml", base("orphans.grace: -1h"), "orphans.grace: expected a duration"),
                new Bad("twice.yaml", base("data-dir: /elsewhere"), "Duplicate field 'data-dir'"),
                new Bad("nested-twice.yaml", base("offload.verify: auto\noffload:\n  verify: none"), "offload.verify: is given twice"),
                new Bad("list.yaml", base("offload.verify: [auto]"), "offload.verify: expected a single value, got a list"),
                new Bad("no-value.yaml", base("node-id:"), "node-id: has no value"),
                new Bad("verify.yaml", base("offload.verify: maybe"), "offload.verify: expected auto, server-checksum, read-back or none"),
                new Bad("bandwidth.yaml", base("offload.bandwidth: lots"), "offload.bandwidth: expected a number of bytes"),
                new Bad("batch.yaml", base("retention.delete-batch-size: 0"), "retention.delete-batch-size: expected an integer from 1 to 1000"),
                new Bad("bool.yaml", base("retention.deleted-streams: maybe"), "retention.deleted-streams: expected true or false"),
                new Bad("level.yaml", base("log.level: loud"), "log.level: expected error, warn, info, debug or trace"),
                new Bad("cache.yaml", base("chunk-cache.bytes: -5"), "chunk-cache.bytes: expected a number of bytes >= 0"),
                new Bad("shard-path.yaml", base("retention.shards:\n  \"../../etc\":\n    retention.ms: 1d"),
                        "shard directory '../../etc' must be a directory's name under the data root, not a path"),
                new Bad("stream-pattern.yaml", base("retention.streams:\n  \"acme/default\":\n    retention.ms: 1d"),
                        "stream pattern 'acme/default' must be tenant/namespace/stream"),
                new Bad("no-data-root.yaml", base("").replace("data-dir: " + root, "data-dir: " + dir.resolve("nowhere")), "data-dir: no directory at"),
                new Bad("data-root-is-a-file.yaml", base("").replace("data-dir: " + root, "data-dir: " + root.resolve("node-id")), "data-dir: no directory at"),
                new Bad("uri-credentials.yaml", base("").replace("store: " + store, "store: s3://AKIAEXAMPLE:secret@felix-bucket"),
                        "store: store URI credentials: credentials must not be written into a store URI"),
                new Bad("uri-climbs.yaml", base("").replace("store: " + store, "store: \"s3://felix-bucket/../x?region=us-east-1\""),
                        "store: store URI prefix"),
                new Bad("top-level-list.yaml", "- " + root + "\n- " + store + "\n", "expected a mapping of keys to values at the top"),
                new Bad("nesting.yaml", base("x:" + " [".repeat(5000)), "not valid YAML"),
                new Bad("too-large.yaml", base("# " + over), "is larger than 1024 KiB"),
                new Bad("escape.properties", "data-dir=" + root + "\nstore=" + store + "\noffload.verify=\\uZZZZ\n",
                        "not a valid properties file")));
        StringBuilder laughs = new StringBuilder(base("a: &a [x, x, x, x, x, x, x, x, x]"));
        for (char name = 'b'; name <= 'k'; name++) {
            String prev = "*" + (char) (name - 1);
            laughs.append(name).append(": &").append(name).append(" [").append(String.join(", ", java.util.Collections.nCopies(9, prev)))
                    .append("]\n");
        }
        bad.add(new Bad("laughs.yaml", laughs.toString(), "expected a single value, got a list"));

        List<Path> files = new ArrayList<>();
        for (Bad b : bad) {
            Path file = config(b.name(), b.text());
            files.add(file);
            c.expect(FelixOffload.USAGE, List.of("felix-offload: " + file, b.says()), "run", "--config", file.toString());
        }
        Path latin1 = dir.resolve("configs").resolve("latin1.yaml");
        Files.write(latin1, (base("node-id: n\u00f6de")).getBytes(StandardCharsets.ISO_8859_1));
        c.expect(FelixOffload.USAGE, List.of(latin1 + ": not UTF-8: byte 0xf6"), "run", "--config", latin1.toString());
        Path missing = dir.resolve("configs").resolve("missing.yaml");
        c.expect(FelixOffload.USAGE, List.of("no configuration file at " + missing), "run", "--config", missing.toString());

        // The one-shot commands read the same file the same way.
        for (int i = 0; i < 6; i++) {
            Path file = files.get(i * 6);
            String says = bad.get(i * 6).says();
            for (String command : List.of("offload", "retention", "scrub")) {
                c.expect(FelixOffload.USAGE, List.of(file.toString(), says), command, "--config", file.toString());
            }
        }
        c.done();
    }

    @Test
    void malformedStoreUrisNameTheirBadPart() throws Exception {
        Cases c = new Cases("store URI");
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("ftp://felix-bucket", "store URI scheme: 'ftp' is not a store kind");
        bad.put("felix-bucket", "has no scheme");
        bad.put("s3://", "store URI bucket");
        bad.put("s3://B", "store URI bucket: setting 'bucket' must be 3-63 lower-case letters");
        bad.put("s3://AKIAEXAMPLE:secret@felix-bucket", "store URI credentials");
        bad.put("file:relative/store", "store URI path");
        bad.put("file:///tmp/felix%00store", "store URI path");
        bad.put("file://fileserver/share", "store URI host");
        bad.put("s3://felix-bucket?region=us-east-1&colour=blue", "store URI colour: unknown parameter");
        bad.put("s3://felix-bucket?region=us-east-1&region=eu-west-1", "store URI region: the parameter is given twice");
        bad.put("s3://felix-bucket?region=us-east-1&part-size=1", "store URI part-size");
        bad.put("s3://felix-bucket?region=us-east-1&max-attempts=0", "store URI max-attempts");
        bad.put("s3://felix-bucket?region=us-east-1&multipart-threshold=99999999999999999999", "store URI multipart-threshold");
        bad.put("s3://felix-bucket?endpoint=ftp://host&region=us-east-1", "store URI endpoint");
        bad.put("s3://felix-bucket?endpoint=not a url&region=us-east-1", "store URI syntax");
        bad.put("s3://felix-bucket/../x?region=us-east-1", "store URI prefix");
        bad.put("s3://felix-bucket?region=us-east-1&checksum=sometimes", "store URI checksum");
        bad.put("minio://felix-bucket", "store URI endpoint: a minio URI needs ?endpoint=");
        int i = 0;
        for (Map.Entry<String, String> b : bad.entrySet()) {
            List<String> says = List.of("--store: ", b.getValue());
            c.expect(FelixOffload.USAGE, says, "offload", "--data-dir", root.toString(), "--store", b.getKey());
            // The read-only commands parse the same way; a few of each are enough to show it.
            if (i++ % 4 == 0) {
                c.expect(FelixOffload.USAGE, says, "scrub", "--data-dir", root.toString(), "--store", b.getKey());
                c.expect(FelixOffload.USAGE, says, "read", "--data-dir", root.toString(), "--store", b.getKey(),
                        "--shard", shards.get(0).getFileName().toString(), "--from", "0");
            }
        }
        // A filesystem store that is not there is a mistake for the commands that read or delete from it,
        // not an empty store to report every object missing from (or to create).
        String typo = dir.resolve("stroe").toUri().toString();
        c.expect(FelixOffload.USAGE, List.of("--store: no store directory at " + dir.resolve("stroe")), "scrub", "--data-dir",
                root.toString(), "--store", typo);
        c.expect(FelixOffload.USAGE, List.of("--store: no store directory at"), "read", "--data-dir", root.toString(),
                "--store", typo, "--shard", shards.get(0).getFileName().toString(), "--from", "0");
        Path retention = config("retention-typo.yaml", base("retention.bytes: 1").replace("store: " + store, "store: " + typo));
        c.expect(FelixOffload.USAGE, List.of(retention + ": store: no store directory at"), "retention", "--config",
                retention.toString());
        assertThat(dir.resolve("stroe")).doesNotExist();
        c.done();
    }

    @Test
    void wrongCredentialsAndUnreachableEndpointsFailThePassAndChangeNothing() throws Exception {
        Cases c = new Cases("credentials and endpoints");
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("bad-input");
        // A root of its own, never offloaded, so every sealed segment is eligible; its node id fixed up front.
        Path remoteRoot = dir.resolve("remote-data");
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", remoteRoot.toString(), "--records", "2000",
                "--payload-bytes", "200", "--segment-bytes", "65536"));
        Files.writeString(remoteRoot.resolve("node-id"), "node-bad-input\n");
        c.world = new World().dir("data", remoteRoot).listing(bucket, () -> objects(server, bucket));
        String uri = "s3://" + bucket + "?endpoint=" + server.endpoint() + "&region=" + server.region()
                + "&path-style=true&max-attempts=2";
        String access = server.credentials().accessKey().orElseThrow();
        String secret = server.credentials().secretKey().orElseThrow();
        String[] offload = {"offload", "--data-dir", remoteRoot.toString(), "--store", uri, "--keep-local-segments", "1"};
        String[] scrub = {"scrub", "--data-dir", remoteRoot.toString(), "--store", uri};

        c.env = awsEnv(access, secret + "-rotated", server.region());
        c.expect(FelixOffload.CORRUPT, List.of("403", "SignatureDoesNotMatch", "check AWS_SECRET_ACCESS_KEY"), offload);
        // scrub's contract: 1 for what it found wrong in the store, 3 when it could not read the store at all.
        c.expect(FelixOffload.IO, List.of("403", "SignatureDoesNotMatch", "check AWS_SECRET_ACCESS_KEY"), scrub);
        c.env = awsEnv("AKIAUNKNOWN0000000000", secret, server.region());
        c.expect(FelixOffload.CORRUPT, List.of("403", "InvalidAccessKeyId", "check AWS_ACCESS_KEY_ID"), offload);
        // No credentials anywhere: not in the environment, no profile files, no instance metadata.
        Map<String, String> none = awsEnv(null, null, server.region());
        none.put("AWS_SHARED_CREDENTIALS_FILE", dir.resolve("no-credentials").toString());
        none.put("AWS_CONFIG_FILE", dir.resolve("no-config").toString());
        none.put("AWS_EC2_METADATA_DISABLED", "true");
        none.put("AWS_CONTAINER_CREDENTIALS_FULL_URI", null);
        none.put("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", null);
        none.put("AWS_WEB_IDENTITY_TOKEN_FILE", null);
        none.put("AWS_PROFILE", null);
        c.env = none;
        c.expect(FelixOffload.CORRUPT, List.of("no credentials found: set AWS_ACCESS_KEY_ID"), offload);

        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        String refused = "s3://" + bucket + "?endpoint=http://127.0.0.1:" + closed + "&region=" + server.region()
                + "&path-style=true&max-attempts=2";
        c.env = awsEnv(access, secret, server.region());
        c.expect(FelixOffload.CORRUPT, List.of("Connection refused", "127.0.0.1:" + closed), "offload", "--data-dir",
                remoteRoot.toString(), "--store", refused, "--keep-local-segments", "1");
        c.expect(FelixOffload.IO, List.of("Connection refused", "127.0.0.1:" + closed), "scrub", "--data-dir", remoteRoot.toString(),
                "--store", refused);

        // The same root and store with the right credentials: the pass goes through, so the refusals above
        // were about the credentials and the endpoint and nothing else (a control, run inside this JVM).
        c.env = awsEnv(access, secret, server.region());
        Felix.Result good = Felix.inside(dir, c.env, TIMEOUT, offload);
        c.soft.assertThat(good.exit()).as("the same pass with the right credentials: " + good.describe()).isZero();
        c.soft.assertThat(objects(server, bucket)).as("objects after the pass with the right credentials").isNotEmpty();
        c.done();
    }

    private static Map<String, String> awsEnv(String access, String secret, String region) {
        Map<String, String> env = new HashMap<>();
        env.put("AWS_ACCESS_KEY_ID", access);
        env.put("AWS_SECRET_ACCESS_KEY", secret);
        env.put("AWS_SESSION_TOKEN", null);
        env.put("AWS_REGION", region);
        return env;
    }

    private static Map<String, String> objects(S3Server server, String bucket) {
        Map<String, String> out = new TreeMap<>();
        server.admin().listObjectsV2Paginator(b -> b.bucket(bucket)).contents()
                .forEach(o -> out.put(o.key(), o.size() + " bytes, etag " + o.eTag()));
        return out;
    }

    @Test
    void shardNamesThatAreNotShardDirectoriesAreRefused() throws Exception {
        Cases c = new Cases("shard names");
        String shard = shards.get(0).getFileName().toString();
        for (String bad : List.of("", ".", "..", "../data", shard + "/..", "/etc", ".deleted", "node-id", "no-such-shard",
                shard + "\\..")) {
            c.expect(FelixOffload.USAGE, List.of("no shard directory '" + bad + "'"), "read", "--data-dir", root.toString(),
                    "--store", store, "--shard", bad, "--from", "0");
        }
        c.expect(FelixOffload.USAGE, List.of("no shard directory at"), "manifest", "show", "--shard-dir",
                root.resolve("no-such-shard").toString());
        c.expect(FelixOffload.USAGE, List.of("--shard must be between 0 and 4294967295"), "shard-dir", "--tenant", "acme",
                "--namespace", "default", "--stream", "orders", "--shard", "4294967296");
        c.expect(FelixOffload.USAGE, List.of("--shard must be between 0 and 4294967295"), "shard-dir", "--tenant", "acme",
                "--namespace", "default", "--stream", "orders", "--shard", "-1");

        // The daemon's HTTP reader takes shard names from the network: the same refusals, as 4xx answers.
        Path daemonConfig = config("daemon.yaml", base("offload.schedule: \"off\"\nretention.schedule: \"off\"\n"
                + "scrub.schedule: \"off\""));
        Map<String, String> before = world.snapshot();
        try (Felix.Running daemon = Felix.start(dir, Map.of(), List.of(), true, List.of("run", "--config",
                daemonConfig.toString()))) {
            URI base = daemonEndpoint(daemon);
            HttpClient http = HttpClient.newHttpClient();
            Map<String, Integer> requests = new LinkedHashMap<>();
            requests.put("/read?shard=..%2F..%2Fetc&from=0", 404);
            requests.put("/read?shard=..&from=0", 404);
            requests.put("/read?shard=&from=0", 400); // no shard named: malformed, not an unknown shard
            requests.put("/read?shard=.deleted&from=0", 404);
            requests.put("/read?shard=" + shard + "&from=-1", 400);
            requests.put("/read?shard=" + shard + "&from=18446744073709551616", 400);
            requests.put("/read?shard=" + shard + "&from=0&max=100000000", 400);
            requests.put("/read?shard=" + shard + "&from=0&max=0", 400);
            requests.put("/read?shard=" + shard, 400);
            for (Map.Entry<String, Integer> r : requests.entrySet()) {
                HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve(r.getKey()))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                c.soft.assertThat(answer.statusCode()).as("GET " + r.getKey() + ": " + answer.body()).isEqualTo(r.getValue());
                tally.merge("shard names", 1, Integer::sum);
            }
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(base.resolve("/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            c.soft.assertThat(health.body()).as("the daemon after the bad requests").contains("\"live\":true");
        }
        c.soft.assertThat(World.differences(before, world.snapshot())).as("the daemon's bad requests changed").isEmpty();
        c.done();
    }

    private static final Pattern SERVING = Pattern.compile("serving (http://[^/\\s]+/)");

    private static URI daemonEndpoint(Felix.Running daemon) throws Exception {
        long limit = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < limit) {
            if (!daemon.process.isAlive()) {
                throw new AssertionError("the daemon exited: " + daemon.result().describe());
            }
            Matcher m = SERVING.matcher(Files.exists(daemon.err) ? Files.readString(daemon.err) : "");
            Matcher o = SERVING.matcher(Files.exists(daemon.out) ? Files.readString(daemon.out) : "");
            if (m.find()) {
                return URI.create(m.group(1));
            }
            if (o.find()) {
                return URI.create(o.group(1));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the daemon never said where it serves");
    }

    @Test
    void aManifestKeyThatClimbsOutOfTheStoreIsRefusedAndNothingOutsideIsReadOrDeleted() throws Exception {
        Cases c = new Cases("manifest key with ..");
        // A copy of one offloaded shard, alone in its root, whose first entry now names an object beside the
        // store. A real copy of the object waits there, so a command that followed the key would find a
        // well-formed segment of the right size and CRC32 and succeed: these cases can only pass by refusing.
        // The shard has a store of its own (a copy of its objects): the orphan sweep of a root holding only this
        // shard would rightly take the other shard's objects for orphans of a removed shard.
        Path badRoot = dir.resolve("climbing-data");
        Path badStore = dir.resolve("climbing-store");
        String shardName = shards.get(0).getFileName().toString();
        Path shardDir = badRoot.resolve(shardName);
        copyTree(shards.get(0), shardDir);
        Files.copy(root.resolve("node-id"), badRoot.resolve("node-id"));
        Files.copy(root.resolve("offload-root-id"), badRoot.resolve("offload-root-id")); // the same root, as its node claim knows it
        copyLease(badRoot); // and as the node's lease knows it
        String node = Files.readString(root.resolve("node-id")).trim();
        copyTree(storeDir.resolve(node).resolve(shardName), badStore.resolve(node).resolve(shardName));
        String store = badStore.toUri().toString();
        ManifestEntry first = ManifestStore.read(shardDir).entries().get(0);
        String climbing = "../outside/" + first.objectKey();
        Path victim = outside.resolve(first.objectKey());
        Files.createDirectories(victim.getParent());
        Files.copy(storeDir.resolve(first.objectKey()), victim, StandardCopyOption.REPLACE_EXISTING);
        Path manifest = ManifestStore.fileIn(shardDir);
        int keyAt = ManifestCodec.HEADER_LENGTH + ManifestCodec.KEY_OFFSET;
        Files.write(manifest, withFirstKey(Files.readAllBytes(manifest), climbing));
        c.world = new World().dir("data", badRoot).dir("store", badStore).dir("outside", outside);

        List<String> says = List.of(ManifestStore.FILE_NAME, "byte " + keyAt, "'..'");
        String shard = shardDir.getFileName().toString();
        c.expect(FelixOffload.CORRUPT, says, "manifest", "show", "--shard-dir", shardDir.toString());
        c.expect(FelixOffload.CORRUPT, says, "fsck", "--data-dir", badRoot.toString());
        c.expect(FelixOffload.CORRUPT, says, "read", "--data-dir", badRoot.toString(), "--store", store, "--shard", shard,
                "--from", Long.toUnsignedString(first.baseOffset()));
        c.expect(FelixOffload.CORRUPT, says, "scrub", "--data-dir", badRoot.toString(), "--store", store);
        c.expect(FelixOffload.CORRUPT, says, "offload", "--data-dir", badRoot.toString(), "--store", store,
                "--keep-local-segments", "1");
        Path retention = config("climbing.yaml", "data-dir: " + badRoot + "\nstore: " + store
                + "\nretention.bytes: 1\nlocal.retention.bytes: 1\norphans.grace: 0s\n");
        // The pass goes on with the shards it can read: its orphan sweep lists the whole prefix (no full sweep is
        // recorded yet), keeps every key under the damaged shard's prefix, and keeps its own bookkeeping (an
        // empty journal of pending writes, the time of that listing). Nothing else may change.
        c.mayChange = SWEEP_BOOKKEEPING;
        c.expect(FelixOffload.CORRUPT, says, "retention", "--config", retention.toString());
        c.mayChange = List.of();

        // And the filesystem store itself refuses the key, whoever hands it over.
        try (ObjectStore fs = FilesystemStore.open(badStore)) {
            Map<String, String> before = c.world.snapshot();
            assertThatThrownBy(() -> fs.head(climbing)).isInstanceOf(InvalidKeyException.class).hasMessageContaining("'..'");
            assertThatThrownBy(() -> fs.delete(climbing)).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> fs.put(climbing, UploadBody.ofBytes(new byte[] {1})))
                    .isInstanceOf(InvalidKeyException.class);
            assertThat(World.differences(before, c.world.snapshot())).isEmpty();
            tally.merge("manifest key with ..", 3, Integer::sum);
        }
        c.done();
    }

    /** A manifest's bytes with entry 0's key replaced, key length and CRC written to match. */
    private static byte[] withFirstKey(byte[] manifest, String key) {
        ByteBuffer in = ByteBuffer.wrap(manifest);
        int entry = ManifestCodec.HEADER_LENGTH;
        int oldLength = Short.toUnsignedInt(in.getShort(entry + ManifestCodec.KEY_LENGTH_OFFSET));
        byte[] newKey = key.getBytes(StandardCharsets.UTF_8);
        int keyAt = entry + ManifestCodec.KEY_OFFSET;
        ByteBuffer out = ByteBuffer.allocate(manifest.length - oldLength + newKey.length);
        out.put(manifest, 0, keyAt).put(newKey).put(manifest, keyAt + oldLength, manifest.length - keyAt - oldLength);
        out.putShort(entry + ManifestCodec.KEY_LENGTH_OFFSET, (short) newKey.length);
        return resealed(out.array());
    }

    /** {@code bytes} with the last four replaced by the CRC32 of everything before them. */
    private static byte[] resealed(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        return bytes;
    }

    @Test
    void hugeCountsAndLengthsAreRefusedWithoutAllocatingThem() throws Exception {
        Cases c = new Cases("huge counts and lengths");
        // A 64 MiB heap: anything sized by one of these numbers (2^32 entries, a 512 MiB record) would not fit.
        c.jvm = List.of("-Xmx64m");

        // A manifest claiming 2^32 - 1 entries, its CRC valid, so only the count is wrong.
        Path manyRoot = dir.resolve("many-entries");
        Path manyShard = manyRoot.resolve(shards.get(0).getFileName());
        copyTree(shards.get(0), manyShard);
        Files.copy(root.resolve("node-id"), manyRoot.resolve("node-id"));
        Files.copy(root.resolve("offload-root-id"), manyRoot.resolve("offload-root-id")); // the same root, as its node claim knows it
        copyLease(manyRoot); // and as the node's lease knows it
        Path manifest = ManifestStore.fileIn(manyShard);
        byte[] bytes = Files.readAllBytes(manifest);
        ByteBuffer.wrap(bytes).putInt(ManifestCodec.COUNT_OFFSET, -1);
        Files.write(manifest, resealed(bytes));
        c.world = new World().dir("data", manyRoot).dir("store", storeDir);
        List<String> count = List.of("Truncated", ManifestStore.FILE_NAME, "byte " + ManifestCodec.HEADER_LENGTH,
                "4294967295 entries");
        c.expect(FelixOffload.CORRUPT, count, "manifest", "show", "--shard-dir", manyShard.toString());
        c.expect(FelixOffload.CORRUPT, count, "read", "--data-dir", manyRoot.toString(), "--store", store, "--shard",
                manyShard.getFileName().toString(), "--from", "0");
        c.expect(FelixOffload.CORRUPT, count, "offload", "--data-dir", manyRoot.toString(), "--store", store,
                "--keep-local-segments", "1");

        // A manifest key length of 65535 with far fewer bytes left.
        bytes = Files.readAllBytes(ManifestStore.fileIn(shards.get(0)));
        ByteBuffer.wrap(bytes).putShort(ManifestCodec.HEADER_LENGTH + ManifestCodec.KEY_LENGTH_OFFSET, (short) 0xFFFF);
        Files.write(manifest, resealed(bytes));
        c.expect(FelixOffload.CORRUPT, List.of("Truncated", "byte " + (ManifestCodec.HEADER_LENGTH + ManifestCodec.KEY_OFFSET),
                "65535"), "manifest", "show", "--shard-dir", manyShard.toString());

        // A sealed local segment whose first record claims a 512 MiB payload, its header CRC made valid so
        // that the length is what is judged.
        Path bigRoot = dir.resolve("big-record");
        Path bigShard = bigRoot.resolve(shards.get(1).getFileName());
        copyTree(shards.get(1), bigShard);
        Files.copy(root.resolve("node-id"), bigRoot.resolve("node-id"));
        Files.copy(root.resolve("offload-root-id"), bigRoot.resolve("offload-root-id")); // the same root, as its node claim knows it
        copyLease(bigRoot); // and as the node's lease knows it
        Files.deleteIfExists(ManifestStore.fileIn(bigShard));
        List<Path> segments = segmentFiles(bigShard);
        Path sealed = segments.get(0);
        byte[] seg = Files.readAllBytes(sealed);
        int record = SegmentHeader.LENGTH;
        ByteBuffer b = ByteBuffer.wrap(seg);
        b.putInt(record + RecordCodec.PAYLOAD_LEN_OFFSET, 0x1FFF_FFFF);
        CRC32 crc = new CRC32();
        crc.update(seg, record, RecordCodec.HEADER_CRC_OFFSET);
        b.putInt(record + RecordCodec.HEADER_CRC_OFFSET, (int) crc.getValue());
        Files.write(sealed, seg);
        String segmentId = sealed.getFileName().toString().replaceFirst("^0+(?=.)", "").replace(".log", "");
        c.world = new World().dir("data", bigRoot).dir("store", storeDir);
        List<String> tooLarge = List.of("RecordTooLarge", "byte " + record);
        c.expect(FelixOffload.CORRUPT, tooLarge, "dump", "--segment", sealed.toString());
        c.expect(FelixOffload.CORRUPT, tooLarge, "fsck", "--data-dir", bigRoot.toString());
        c.expect(FelixOffload.CORRUPT, List.of("RecordTooLarge", "segment " + segmentId, "byte " + record), "offload",
                "--data-dir", bigRoot.toString(), "--store", store, "--keep-local-segments", "1");
        long base = ByteBuffer.wrap(seg).getLong(SegmentHeader.BASE_OFFSET_OFFSET);
        c.expect(FelixOffload.CORRUPT, tooLarge, "read", "--data-dir", bigRoot.toString(), "--store", store, "--shard",
                bigShard.getFileName().toString(), "--from", Long.toUnsignedString(base));

        // Numbers on the command line past what the tool will make or read.
        c.world = new World().dir("data", root).dir("store", storeDir).dir("generated", dir.resolve("generated"));
        String generated = dir.resolve("generated").toString();
        c.expect(FelixOffload.USAGE, List.of("at most 10000 are generated at once"), "generate", "--data-dir", generated,
                "--streams", "100000", "--shards-per-stream", "100000");
        c.expect(FelixOffload.USAGE, List.of("--data-dir: 1 shards of 1000000000000000 records"), "generate", "--data-dir",
                generated, "--records", "1000000000000000", "--payload-bytes", "65536");
        c.expect(FelixOffload.USAGE, List.of("--payload-bytes must be between 0 and " + RecordCodec.MAX_PAYLOAD_BYTES),
                "generate", "--data-dir", generated, "--payload-bytes", "2147483647");
        c.expect(FelixOffload.USAGE, List.of("--parallelism", "99999999999"), "offload", "--data-dir", root.toString(),
                "--store", store, "--parallelism", "99999999999");
        c.expect(FelixOffload.USAGE, List.of("--from must be an unsigned 64-bit offset"), "read", "--data-dir",
                root.toString(), "--store", store, "--shard", shards.get(0).getFileName().toString(), "--from",
                "18446744073709551616");
        c.expect(FelixOffload.USAGE, List.of("--max-records must be at least 1"), "read", "--data-dir", root.toString(),
                "--store", store, "--shard", shards.get(0).getFileName().toString(), "--from", "0", "--max-records", "0");
        c.done();
    }

    private static List<Path> segmentFiles(Path shardDir) throws IOException {
        try (var files = Files.list(shardDir)) {
            return files.filter(f -> f.getFileName().toString().matches("\\d{20}\\.log")).sorted().toList();
        }
    }

    @Test
    void badNodeIdsAStoreThatIsAFileATruncatedObjectAndASecondDaemonEndWithoutATrace() throws Exception {
        Cases c = new Cases("operator mistakes");
        // Node ids from the environment: every command that names objects by it refuses them, exit 2.
        Path noNodeId = config("env-node-id.yaml", base(""));
        for (String bad : List.of("a/b", "..", "", "n".repeat(129), "a b")) {
            c.env = Map.of("FELIX_NODE_ID", bad);
            List<String> says = List.of("node id from environment variable FELIX_NODE_ID");
            c.expect(FelixOffload.USAGE, says, "offload", "--data-dir", root.toString(), "--store", store);
            c.expect(FelixOffload.USAGE, says, "scrub", "--data-dir", root.toString(), "--store", store);
            c.expect(FelixOffload.USAGE, says, "retention", "--config", noNodeId.toString());
            // The daemon refuses to start rather than fail every pass.
            c.expect(FelixOffload.USAGE, List.of(noNodeId + ": node id from environment variable FELIX_NODE_ID"),
                    "run", "--config", noNodeId.toString());
        }
        c.env = Map.of();

        // A node-id file holding a path, in a root of its own.
        Path climbing = dir.resolve("node-id-root");
        copyAll(root, climbing);
        Files.writeString(climbing.resolve("node-id"), "../x\n");
        c.world = new World().dir("data", climbing).dir("store", storeDir);
        String says = "node id from " + climbing.resolve("node-id");
        c.expect(FelixOffload.USAGE, List.of(says), "offload", "--data-dir", climbing.toString(), "--store", store);
        c.expect(FelixOffload.USAGE, List.of(says), "scrub", "--data-dir", climbing.toString(), "--store", store);
        Path climbingConfig = config("node-id-file.yaml", "data-dir: " + climbing + "\nstore: " + store + "\nhttp.port: 0\n");
        c.expect(FelixOffload.USAGE, List.of(says), "retention", "--config", climbingConfig.toString());
        c.expect(FelixOffload.USAGE, List.of(climbingConfig + ": " + says), "run", "--config", climbingConfig.toString());
        c.world = world;

        // A file:// store naming a regular file.
        Path plain = Files.writeString(dir.resolve("not-a-store"), "x");
        c.expect(FelixOffload.USAGE, List.of("--store: " + plain + " is a file"), "offload", "--data-dir", root.toString(),
                "--store", plain.toUri().toString());

        // An object shorter than its manifest entry, read below the local base: Truncated naming the key.
        Path shortRoot = dir.resolve("short-root");
        Path shortStore = dir.resolve("short-store");
        copyAll(root, shortRoot);
        copyAll(storeDir, shortStore);
        ManifestEntry first = ManifestStore.read(shortRoot.resolve(shards.get(0).getFileName())).entries().get(0);
        Path object = shortStore.resolve(first.objectKey());
        byte[] whole = Files.readAllBytes(object);
        Files.write(object, java.util.Arrays.copyOf(whole, whole.length / 3));
        c.world = new World().dir("data", shortRoot).dir("store", shortStore);
        c.expect(FelixOffload.CORRUPT, List.of("Truncated", first.objectKey(), "recorded by its manifest entry"), "read",
                "--data-dir", shortRoot.toString(), "--store", shortStore.toUri().toString(), "--shard",
                shards.get(0).getFileName().toString(), "--from", Long.toString(first.baseOffset()), "--max-records",
                "1000000");
        c.world = world;

        // A second daemon over a root one already serves.
        Path daemonConfig = config("first-daemon.yaml", base("offload.schedule: \"off\"\nretention.schedule: \"off\"\n"
                + "scrub.schedule: \"off\""));
        try (Felix.Running daemon = Felix.start(dir, Map.of(), List.of(), true, List.of("run", "--config",
                daemonConfig.toString()))) {
            daemonEndpoint(daemon);
            c.expect(FelixOffload.USAGE, List.of(daemonConfig + ": data-dir: another daemon holds "
                    + root.resolve("daemon.lock")), "run", "--config", daemonConfig.toString());
            c.soft.assertThat(daemon.process.isAlive()).as("the first daemon still runs").isTrue();
        }
        c.done();
    }

    /** Runs a system command (mount, chown) to its end; answers its exit code and output. */
    private static Felix.Result system(String... command) throws Exception {
        long started = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        return new Felix.Result(p.exitValue(), out, "", Duration.ofNanos(System.nanoTime() - started));
    }

    /** Fills the filesystem under {@code file}'s directory until a write fails, as a full disk would. */
    private static void fill(Path file) throws IOException {
        byte[] chunk = new byte[4096];
        try (var out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
                out.flush();
            }
        } catch (IOException full) {
            // the filesystem is full: what the cases need
        }
    }

    @Test
    void aFullDiskIsReportedNamingTheFileAndTheCause() throws Exception {
        Cases c = new Cases("full disk");
        Path mount = Files.createDirectories(dir.resolve("full-disk"));
        Felix.Result mounted = system("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mount.toString());
        org.junit.jupiter.api.Assumptions.assumeTrue(mounted.exit() == 0, "a full filesystem needs a small tmpfs mounted"
                + " at " + mount + " and this process may not mount one (it needs root): " + mounted.out().strip());
        try {
            // A data root on the small filesystem, its node id fixed before the disk fills.
            Path fullRoot = mount.resolve("data");
            ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", fullRoot.toString(), "--records", "1000",
                    "--payload-bytes", "200", "--segment-bytes", "65536"));
            Files.writeString(fullRoot.resolve("node-id"), "node-full-disk\n");
            // The same records on a roomy disk, to offload onto a store on the small one.
            Path roomyRoot = dir.resolve("roomy-data");
            ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", roomyRoot.toString(), "--records", "4000",
                    "--payload-bytes", "200", "--segment-bytes", "65536"));
            Files.writeString(roomyRoot.resolve("node-id"), "node-full-disk\n");
            // Its identity, as any root has once it was offloaded: the failing pass must change nothing else.
            dev.felix.offload.root.OffloadRootId.readOrCreate(new DataRoot(roomyRoot));
            Path fullStore = Files.createDirectories(mount.resolve("store"));
            fill(mount.resolve("filler"));

            c.world = new World().dir("data", fullRoot);
            c.expect(FelixOffload.IO, List.of("I/O error: " + fullRoot.resolve("offload.lock") + ": No space left on device"),
                    "offload", "--data-dir", fullRoot.toString(), "--store", dir.resolve("store").toUri().toString());
            // The store's disk full: the pass fails on the shard, naming the file the store could not write.
            c.world = new World().dir("data", roomyRoot);
            c.expect(FelixOffload.CORRUPT, List.of("put of key", fullStore.resolve(".felix-staging") + "/",
                    ": No space left on device"), "offload", "--data-dir", roomyRoot.toString(), "--store",
                    fullStore.toUri().toString(), "--keep-local-segments", "1");
        } finally {
            Felix.Result unmounted = system("umount", mount.toString());
            assertThat(unmounted.exit()).as("umount " + mount + ": " + unmounted.out()).isZero();
        }
        c.done();
    }

    @Test
    void aDirectoryTheProcessMayNotWriteIsReportedAsPermissionDeniedNamingIt() throws Exception {
        Cases c = new Cases("permission denied");
        // Root ignores permissions, so the jar runs as the unprivileged user nobody (65534), as an operator's
        // service account would, through util-linux's setpriv.
        Felix.Result id = system("id", "-u");
        Felix.Result setpriv = system("setpriv", "--version");
        org.junit.jupiter.api.Assumptions.assumeTrue(id.out().strip().equals("0") && setpriv.exit() == 0,
                "a directory the process may not write needs the jar run as another user: this needs root and setpriv"
                        + " (uid " + id.out().strip() + ", setpriv: " + setpriv.out().strip() + ")");
        c.wrapper = List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--");

        Path permRoot = dir.resolve("perm-data");
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", permRoot.toString(), "--records", "2000",
                "--payload-bytes", "200", "--segment-bytes", "65536"));
        Files.writeString(permRoot.resolve("node-id"), "node-permission\n");
        // Its identity, as any root has once it was offloaded: the failing pass must change nothing else.
        dev.felix.offload.root.OffloadRootId.readOrCreate(new DataRoot(permRoot));
        Path shard = new DataRoot(permRoot).streamShards().get(0).directory();
        Path permStore = Files.createDirectories(dir.resolve("perm-store"));
        // The process (nobody) owns the root and the store; the shard directory stays root's, mode 755.
        for (Path p : List.of(permRoot, permRoot.resolve("node-id"), permRoot.resolve(DataRoot.OFFLOAD_ROOT_ID), permStore)) {
            Files.setOwner(p, p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        }
        c.world = new World().dir("data", permRoot);
        String says = shard.resolve(ManifestStore.FILE_NAME) + "";
        // The pass uploads before the manifest save fails, so it took the node's lease for those puts (issue 32),
        // and the root remembers it: that, and nothing else, may change in the root.
        // Its journal of pending writes (issue 37) names each key before its put, so that the objects the
        // failed pass left unnamed are found by the next orphan sweep without a listing.
        c.mayChange = List.of("new: data/" + dev.felix.offload.root.NodeLease.FILE_NAME + " ",
                "new: data/" + dev.felix.offload.root.PendingKeysFile.FILE_NAME + " ");
        Felix.Result r = c.expect(FelixOffload.CORRUPT, List.of(says, ": permission denied"), "offload", "--data-dir",
                permRoot.toString(), "--store", permStore.toUri().toString(), "--keep-local-segments", "1", "--json");
        c.mayChange = List.of();
        // The report still counts what is pending, not 0.
        Matcher pending = Pattern.compile("\"pending\":(\\d+)").matcher(r.out());
        c.soft.assertThat(pending.find() && Long.parseLong(pending.group(1)) > 0).as("pending in " + r.out()).isTrue();

        // The data root itself not the process's: the lock file is named.
        Path rootOwned = dir.resolve("perm-root-owned");
        copyAll(permRoot, rootOwned);
        Files.deleteIfExists(rootOwned.resolve("offload.lock")); // the copy's would be nobody's, so it could be opened
        c.world = new World().dir("data", rootOwned);
        c.expect(FelixOffload.IO, List.of("I/O error: " + rootOwned.resolve("offload.lock") + ": permission denied"),
                "offload", "--data-dir", rootOwned.toString(), "--store", permStore.toUri().toString());
        c.done();
    }

    /**
     * The wrapper that runs the jar without the right to read what its mode forbids: nothing for an
     * ordinary user (a mode of 000 stops it), and for root, whom modes do not stop, root without the two
     * capabilities that let it pass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), through util-linux's
     * setpriv. The case is skipped, saying why, where neither works.
     */
    private static List<String> boundByModes() throws Exception {
        Felix.Result id = system("id", "-u");
        if (!id.out().strip().equals("0")) {
            return List.of();
        }
        Felix.Result setpriv = system("setpriv", "--bounding-set=-dac_override,-dac_read_search",
                "--inh-caps=-dac_override,-dac_read_search", "--", "true");
        org.junit.jupiter.api.Assumptions.assumeTrue(setpriv.exit() == 0, "an unreadable directory needs, as root, "
                + "setpriv dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: " + setpriv.out().strip());
        return List.of("setpriv", "--bounding-set=-dac_override,-dac_read_search",
                "--inh-caps=-dac_override,-dac_read_search", "--");
    }

    @Test
    void aShardThatCannotBeReadIsNeverPassedOverAsSuccess() throws Exception {
        Cases c = new Cases("unreadable shard");
        // A copy of the offloaded root and its store: every sealed segment already offloaded, so the only
        // thing a pass could find wrong is the shard it may not read.
        Path lockedRoot = dir.resolve("unreadable-data");
        Path lockedStore = dir.resolve("unreadable-store");
        copyAll(root, lockedRoot);
        copyAll(storeDir, lockedStore);
        String shard = shards.get(0).getFileName().toString();
        Path locked = lockedRoot.resolve(shard);
        String lockedUri = lockedStore.toUri().toString();
        c.world = new World().dir("data", lockedRoot).dir("store", lockedStore);
        c.wrapper = boundByModes();
        java.util.Set<java.nio.file.attribute.PosixFilePermission> mode = Files.getPosixFilePermissions(locked);
        c.beforeRun = () -> Files.setPosixFilePermissions(locked, java.util.Set.of());
        c.afterRun = () -> Files.setPosixFilePermissions(locked, mode);
        List<String> denied = List.of(shard, locked + ": permission denied");

        Felix.Result offload = c.expect(FelixOffload.CORRUPT, List.of(shard, "could not be read", "permission denied"),
                "offload", "--data-dir", lockedRoot.toString(), "--store", lockedUri);
        c.soft.assertThat(offload.out()).as("offload over a shard it could not read").doesNotContain("every eligible segment");
        Felix.Result json = c.expect(FelixOffload.CORRUPT, denied, "offload", "--data-dir", lockedRoot.toString(), "--store",
                lockedUri, "--json");
        c.soft.assertThat(json.out()).as("offload --json").contains("\"complete\":false", "\"unreadable\":[\"" + shard);
        c.expect(FelixOffload.CORRUPT, List.of(shard + ": unreadable, NOT checked", "permission denied", "1 unreadable"),
                "fsck", "--data-dir", lockedRoot.toString());
        c.expect(FelixOffload.CORRUPT, List.of("unreadable shard=" + shard, "permission denied"), "scrub", "--data-dir",
                lockedRoot.toString(), "--store", lockedUri);
        c.expect(FelixOffload.IO, List.of("shard " + shard + " could not be read", "permission denied"), "read",
                "--data-dir", lockedRoot.toString(), "--store", lockedUri, "--shard", shard, "--from", "0");
        Path retention = config("unreadable.yaml", "data-dir: " + lockedRoot + "\nstore: " + lockedUri + "\n");
        c.expect(FelixOffload.CORRUPT, List.of(shard, "permission denied"), "retention", "--config", retention.toString());

        // The daemon: a /shards row saying so, and /read an I/O error, not "no such shard".
        Path daemonConfig = config("unreadable-daemon.yaml", "data-dir: " + lockedRoot + "\nstore: " + lockedUri
                + "\nhttp.port: 0\noffload.schedule: \"off\"\nretention.schedule: \"off\"\nscrub.schedule: \"off\"\n");
        Map<String, String> before = c.world.snapshot();
        c.beforeRun.run();
        try (Felix.Running daemon = Felix.start(dir, Map.of(), c.wrapper, List.of(), true, List.of("run", "--config",
                daemonConfig.toString()))) {
            URI base = daemonEndpoint(daemon);
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> rows = http.send(HttpRequest.newBuilder(base.resolve("/shards"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            c.soft.assertThat(rows.body()).as("/shards").contains("{\"dir\":\"" + shard + "\"")
                    .contains("\"problem\":\"unreadable", locked + ": permission denied");
            HttpResponse<String> read = http.send(HttpRequest.newBuilder(base.resolve("/read?shard=" + shard + "&from=0"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            c.soft.assertThat(read.statusCode()).as("/read of it: " + read.body()).isEqualTo(500);
            c.soft.assertThat(read.body()).as("/read of it").contains("\"error\":\"io_error\"", "permission denied");
            tally.merge("unreadable shard", 2, Integer::sum);
        } finally {
            c.afterRun.run();
        }
        c.soft.assertThat(World.differences(before, c.world.snapshot())).as("the daemon over an unreadable shard changed")
                .isEmpty();

        // A name the root cannot look through at all, whoever runs: a link to a directory that is not there
        // (a shard moved to another disk that is not mounted).
        c.wrapper = List.of();
        c.beforeRun = () -> { };
        c.afterRun = () -> { };
        Path moved = lockedRoot.resolve("acme_default_moved_0-0123456789abcdef");
        Files.createSymbolicLink(moved, dir.resolve("unmounted-disk").resolve(moved.getFileName()));
        Files.setPosixFilePermissions(locked, mode);
        String gone = moved.getFileName().toString();
        c.expect(FelixOffload.CORRUPT, List.of(gone, "a symbolic link to nothing", "could not be read"), "offload",
                "--data-dir", lockedRoot.toString(), "--store", lockedUri);
        c.expect(FelixOffload.CORRUPT, List.of(gone + ": unreadable, NOT checked"), "fsck", "--data-dir",
                lockedRoot.toString());
        c.expect(FelixOffload.CORRUPT, List.of("unreadable shard=" + gone), "scrub", "--data-dir", lockedRoot.toString(),
                "--store", lockedUri);
        c.done();
    }

    @Test
    void configurationThatCannotTakeEffectIsRefusedOrSaidAloud() throws Exception {
        Cases c = new Cases("configuration without effect");
        String shard = shards.get(0).getFileName().toString();
        // A misspelt last key that ends in a real one reads as a stream or directory named with the typo: the
        // override would apply nowhere (or to another limit). Refused, naming the key and the likely one.
        record Bad(String name, String text, String says) {
        }
        List<Bad> bad = List.of(
                new Bad("typo-stream.yaml", base("retention.streams:\n  \"acme/default/orders\":\n    locl.retention.ms: -1"),
                        "'locl.retention.ms' reads as a misspelt key (did you mean local.retention.ms?)"),
                new Bad("typo-stream-bytes.yaml", base("retention.streams.acme/default/orders.lokal.retention.bytes: 1GiB"),
                        "'lokal.retention.bytes' reads as a misspelt key (did you mean local.retention.bytes?)"),
                new Bad("typo-shard.yaml", base("retention.shards:\n  " + shard + ":\n    lcoal.retention.ms: -1"),
                        "'lcoal.retention.ms' reads as a misspelt key (did you mean local.retention.ms?), not as a shard directory"),
                // A cron expression that names no time to come: the pass would never run while /health said ready.
                new Bad("cron-30-february.yaml", base("offload.schedule: \"0 0 30 2 *\""),
                        "offload.schedule: cron expression '0 0 30 2 *' never fires"),
                new Bad("cron-past-year.yaml", base("retention.schedule: \"0 0 0 1 1 ? 2020\""),
                        "retention.schedule: cron expression '0 0 0 1 1 ? 2020' never fires"));
        for (Bad b : bad) {
            Path file = config(b.name(), b.text());
            c.expect(FelixOffload.USAGE, List.of("felix-offload: " + file + ": ", b.says()), "run", "--config", file.toString());
            c.expect(FelixOffload.USAGE, List.of(b.says()), "retention", "--config", file.toString());
        }

        // Overrides naming a stream or a shard the root does not hold: not refused (the stream may come), but
        // said by every retention pass and at the daemon's start.
        String idle = "retention.streams:\n  \"acme/default/ordres\":\n    retention.ms: -1\n"
                + "retention.shards:\n  acme_default_ordres_0-0123456789abcdef:\n    retention.ms: -1";
        Path idleConfig = config("idle-overrides.yaml", base(idle));
        List<String> said = List.of("retention.streams.acme/default/ordres matches no shard under " + root,
                "retention.shards.acme_default_ordres_0-0123456789abcdef matches no shard", "its limits apply to nothing");
        c.mayChange = SWEEP_BOOKKEEPING; // a pass that ran: its sweep prunes the journal and records its listing
        c.expect(FelixOffload.OK, said, "retention", "--config", idleConfig.toString());
        c.mayChange = List.of();
        Path idleDaemon = config("idle-overrides-daemon.yaml", base(idle + "\noffload.schedule: \"off\"\n"
                + "scrub.schedule: \"off\"\nretention.schedule: \"*/2 * * * * ?\""));
        Map<String, String> before = world.snapshot();
        try (Felix.Running daemon = Felix.start(dir, Map.of(), List.of(), true, List.of("run", "--config",
                idleDaemon.toString()))) {
            daemonEndpoint(daemon);
            String startup = idleDaemon + ": retention.streams.acme/default/ordres matches no shard";
            String pass = "OverrideReach - retention.streams.acme/default/ordres matches no shard";
            long limit = System.nanoTime() + TIMEOUT.toNanos();
            String err = "";
            while (System.nanoTime() < limit && !(err.contains(startup) && count(err, pass) >= 2) && daemon.process.isAlive()) {
                Thread.sleep(100);
                err = Files.readString(daemon.err);
            }
            c.soft.assertThat(err).as("the daemon's start-up").contains(startup);
            c.soft.assertThat(count(err, pass)).as("retention passes saying it: " + err).isGreaterThanOrEqualTo(2);
            tally.merge("configuration without effect", 1, Integer::sum);
        }
        c.soft.assertThat(World.differences(before, world.snapshot())).as("the daemon with idle overrides changed").isEmpty();
        c.done();
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
            n++;
        }
        return n;
    }

    @Test
    void optionsTakeTheConfigurationFilesUnitsAndBounds() throws Exception {
        Cases c = new Cases("one grammar for options");
        String shard = shards.get(0).getFileName().toString();
        // Bytes with a unit, as the file's local.retention.bytes takes them: everything fits in 64GiB, so the
        // pass over the offloaded root uploads and unlinks nothing.
        c.expect(FelixOffload.OK, List.of("every eligible segment is offloaded"), "offload", "--data-dir", root.toString(),
                "--store", store, "--keep-local-bytes", "64GiB");
        c.expect(FelixOffload.USAGE, List.of("--keep-local-bytes", "expected a number of bytes >= 0", "'64Gi'"), "offload",
                "--data-dir", root.toString(), "--store", store, "--keep-local-bytes", "64Gi");
        // The file's bound of offload.parallelism, on the command line too.
        c.expect(FelixOffload.USAGE, List.of("--parallelism: expected an integer from 1 to 1024, got '1025'"), "offload",
                "--data-dir", root.toString(), "--store", store, "--parallelism", "1025");
        Path generated = dir.resolve("generated-with-units");
        c.expect(FelixOffload.OK, List.of("wrote 300 records"), "generate", "--data-dir", generated.toString(), "--records",
                "300", "--segment-bytes", "64KiB", "--payload-bytes", "1KiB");
        // read takes --config, as every other command that talks to the store does.
        Path readConfig = config("read.yaml", "data-dir: " + root + "\nstore: " + store + "\n");
        c.expect(FelixOffload.OK, List.of("offset=0 "), "read", "--config", readConfig.toString(), "--shard", shard,
                "--from", "0", "--max-records", "1");
        c.expect(FelixOffload.USAGE, List.of("give either --config or --data-dir and --store, not both"), "read",
                "--config", readConfig.toString(), "--data-dir", root.toString(), "--shard", shard, "--from", "0");
        c.done();
    }

    @Test
    void theHttpEndpointRefusesMalformedRequestsAndUnknownPaths() throws Exception {
        Cases c = new Cases("HTTP requests");
        String shard = shards.get(0).getFileName().toString();
        Path daemonConfig = config("http-edges.yaml", base("offload.schedule: \"off\"\nretention.schedule: \"off\"\n"
                + "scrub.schedule: \"off\""));
        Map<String, String> before = world.snapshot();
        try (Felix.Running daemon = Felix.start(dir, Map.of(), List.of(), true, List.of("run", "--config",
                daemonConfig.toString()))) {
            URI base = daemonEndpoint(daemon);
            HttpClient http = HttpClient.newHttpClient();
            Map<String, Integer> requests = new LinkedHashMap<>();
            // Malformed /read requests: which value would count, what was misspelt, which shard?
            requests.put("/read?from=0", 400);
            requests.put("/read?shard=" + shard + "&from=0&from=5", 400);
            requests.put("/read?shard=" + shard + "&shard=no-such-shard&from=0", 400);
            requests.put("/read?shard=" + shard + "&from=0&maxbytes=10", 400);
            // Paths that only start like an endpoint: the JDK's server hands them to it unless told otherwise.
            for (String path : List.of("/metricsfoo", "/metrics/x", "/shardsx", "/shards/x", "/readme?shard=" + shard
                    + "&from=0", "/read/x?shard=" + shard + "&from=0", "/healthz")) {
                requests.put(path, 404);
            }
            // ... while the endpoints themselves still answer.
            requests.put("/metrics", 200);
            requests.put("/shards/", 200);
            requests.put("/read?shard=" + shard + "&from=0&max=1", 200);
            for (Map.Entry<String, Integer> r : requests.entrySet()) {
                HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve(r.getKey()))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                c.soft.assertThat(answer.statusCode()).as("GET " + r.getKey() + ": " + answer.body()).isEqualTo(r.getValue());
                if (r.getValue() != 200) {
                    c.soft.assertThat(answer.body()).as("GET " + r.getKey()).contains(r.getValue() == 400
                            ? "\"error\":\"bad_request\"" : "\"error\":\"not_found\"");
                }
                tally.merge("HTTP requests", 1, Integer::sum);
            }
        }
        c.soft.assertThat(World.differences(before, world.snapshot())).as("the requests changed").isEmpty();
        c.done();
    }

    @Test
    void anIpv6BindIsPrintedInBrackets() throws Exception {
        Cases c = new Cases("HTTP requests");
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getByName("::1"))) {
            probe.getLocalPort();
        } catch (IOException e) {
            org.junit.jupiter.api.Assumptions.abort("this machine has no IPv6 loopback to bind: " + e.getMessage());
        }
        Path daemonConfig = config("ipv6.yaml", base("http.bind: \"::1\"\noffload.schedule: \"off\"\n"
                + "retention.schedule: \"off\"\nscrub.schedule: \"off\""));
        try (Felix.Running daemon = Felix.start(dir, Map.of(), List.of(), true, List.of("run", "--config",
                daemonConfig.toString()))) {
            URI base = daemonEndpoint(daemon);
            c.soft.assertThat(base.toString()).as("where the daemon says it serves").startsWith("http://[::1]:");
            String said = Files.readString(daemon.out) + Files.readString(daemon.err);
            c.soft.assertThat(said).as("every line naming the endpoint").doesNotContain("http://::1");
            if (base.getHost() != null) {
                HttpResponse<String> live = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve(
                        "/health/live")).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                c.soft.assertThat(live.statusCode()).as("the printed URL answers").isEqualTo(200);
            }
            tally.merge("HTTP requests", 1, Integer::sum);
        }
        c.done();
    }

    @Test
    void readingPastTheEndOfTheLogSaysSo() throws Exception {
        Cases c = new Cases("read past the end");
        String shard = shards.get(0).getFileName().toString();
        // 2000 records were generated: offsets 0 to 1999, so 2000 is the end (nothing yet, a success) and
        // anything above it was never written.
        c.expect(FelixOffload.OK, List.of(), "read", "--data-dir", root.toString(), "--store", store, "--shard", shard,
                "--from", "2000");
        c.expect(FelixOffload.CORRUPT, List.of("offset 2001 is past the end of the log", "the next offset to be written is 2000"),
                "read", "--data-dir", root.toString(), "--store", store, "--shard", shard, "--from", "2001");
        c.expect(FelixOffload.CORRUPT, List.of("\"error\":\"BeyondLogEnd\"", "\"log_end\":2000"), "read", "--data-dir",
                root.toString(), "--store", store, "--shard", shard, "--from", "18446744073709551615", "--json");
        c.done();
    }

    @Test
    void aMissingBucketAnUntrustedCertificateAndTheEndpointInUseAreNamed() throws Exception {
        Cases c = new Cases("store endpoints");
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("edges");
        // A root never offloaded and without a node id yet: a pass that began would write one first.
        Path edgeRoot = dir.resolve("edge-data");
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", edgeRoot.toString(), "--records", "1000",
                "--payload-bytes", "200", "--segment-bytes", "65536"));
        String shard = new DataRoot(edgeRoot).streamShards().get(0).name();
        c.world = new World().dir("data", edgeRoot).listing(bucket, () -> objects(server, bucket));
        String access = server.credentials().accessKey().orElseThrow();
        String secret = server.credentials().secretKey().orElseThrow();
        c.env = awsEnv(access, secret, server.region());

        // A bucket that does not exist: a configuration mistake (exit 2), said before anything is written.
        String missing = "s3://felix-no-such-bucket?endpoint=" + server.endpoint() + "&region=" + server.region()
                + "&path-style=true&max-attempts=2";
        List<String> noBucket = List.of("--store: the bucket does not exist", "felix-no-such-bucket", "NoSuchBucket");
        c.expect(FelixOffload.USAGE, noBucket, "offload", "--data-dir", edgeRoot.toString(), "--store", missing);
        c.expect(FelixOffload.USAGE, noBucket, "scrub", "--data-dir", edgeRoot.toString(), "--store", missing);
        // read needs the store only below the local base (issue 35: a local read never contacts it), so the
        // missing bucket is refused when a read reaches the store, and a read of local records is served.
        c.expect(FelixOffload.OK, List.of("offset=0 ", "source=local"), "read", "--data-dir", edgeRoot.toString(),
                "--store", missing, "--shard", shard, "--from", "0", "--max-records", "1");
        Path offloadedRoot = dir.resolve("edge-offloaded");
        ok(Felix.inside(dir, Map.of(), TIMEOUT, "generate", "--data-dir", offloadedRoot.toString(), "--records", "1000",
                "--payload-bytes", "200", "--segment-bytes", "65536"));
        String offloadedBucket = server.createBucket("edges-offloaded");
        String good = "s3://" + offloadedBucket + "?endpoint=" + server.endpoint() + "&region=" + server.region()
                + "&path-style=true";
        ok(Felix.inside(dir, c.env, TIMEOUT, "offload", "--data-dir", offloadedRoot.toString(), "--store", good,
                "--keep-local-segments", "1", "--unlink-settle", "0s"));
        String offloadedShard = new DataRoot(offloadedRoot).streamShards().get(0).name();
        World edgeWorld = c.world;
        c.world = new World().dir("offloaded", offloadedRoot).listing(offloadedBucket, () -> objects(server, offloadedBucket));
        c.expect(FelixOffload.USAGE, noBucket, "read", "--data-dir", offloadedRoot.toString(), "--store", missing,
                "--shard", offloadedShard, "--from", "0");
        c.world = edgeWorld;
        Path missingConfig = config("no-such-bucket.yaml", "data-dir: " + edgeRoot + "\nstore: \"" + missing + "\"\n");
        c.expect(FelixOffload.USAGE, List.of(missingConfig + ": store: the bucket does not exist", "NoSuchBucket"),
                "retention", "--config", missingConfig.toString());

        // AWS_ENDPOINT_URL sends the requests of a URI without endpoint= elsewhere: the description says where.
        Map<String, String> redirected = awsEnv(access, secret, server.region());
        redirected.put("AWS_ENDPOINT_URL", server.endpoint().toString());
        c.env = redirected;
        String viaEnvironment = "s3://felix-no-such-bucket?region=" + server.region() + "&path-style=true&max-attempts=2";
        c.expect(FelixOffload.USAGE, List.of("at " + server.endpoint() + " (from AWS_ENDPOINT_URL, not the store URI)"),
                "offload", "--data-dir", edgeRoot.toString(), "--store", viaEnvironment);
        Path redirectedConfig = config("endpoint-from-environment.yaml", "data-dir: " + edgeRoot + "\nstore: \"s3://"
                + bucket + "?region=" + server.region() + "&path-style=true\"\nhttp.port: 0\noffload.schedule: \"off\"\n"
                + "retention.schedule: \"off\"\nscrub.schedule: \"off\"\n");
        Map<String, String> before = c.world.snapshot();
        try (Felix.Running daemon = Felix.start(dir, redirected, List.of(), true, List.of("run", "--config",
                redirectedConfig.toString()))) {
            URI base = daemonEndpoint(daemon);
            String named = "at " + server.endpoint() + " (from AWS_ENDPOINT_URL, not the store URI)";
            c.soft.assertThat(daemon.outputOnce(named, TIMEOUT)).as("run's line naming the store").contains(named);
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/health"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            c.soft.assertThat(health.body()).as("/health's store description").contains("(from AWS_ENDPOINT_URL");
            tally.merge("store endpoints", 1, Integer::sum);
        }
        c.soft.assertThat(World.differences(before, c.world.snapshot())).as("the daemon changed").isEmpty();
        c.env = awsEnv(access, secret, server.region());

        // HTTPS with a certificate of a CA the JVM does not know: the endpoint named, and how to trust the CA.
        try (TlsFront front = TlsFront.start(dir.resolve("tls"), server.endpoint())) {
            String https = "s3://" + bucket + "?endpoint=" + front.endpoint() + "&region=" + server.region()
                    + "&path-style=true&max-attempts=2";
            List<String> untrusted = List.of("TLS with " + front.endpoint() + " failed", "not signed by a CA",
                    "ca-bundle=/path/to/ca.pem in the store URI");
            c.expect(FelixOffload.CORRUPT, untrusted, "offload", "--data-dir", edgeRoot.toString(), "--store", https);
            c.expect(FelixOffload.IO, untrusted, "scrub", "--data-dir", edgeRoot.toString(), "--store", https);
            Path notPem = Files.writeString(dir.resolve("tls").resolve("not-a-bundle.pem"), "not a certificate\n");
            c.expect(FelixOffload.USAGE, List.of("--store: store URI ca-bundle", notPem.toString()), "offload",
                    "--data-dir", edgeRoot.toString(), "--store", https + "&ca-bundle=" + notPem);
            c.expect(FelixOffload.USAGE, List.of("--store: store URI ca-bundle", "cannot read"), "offload",
                    "--data-dir", edgeRoot.toString(), "--store", https + "&ca-bundle=" + dir.resolve("tls/none.pem"));
            // With the CA's certificate given, the same endpoint serves the pass, and scrub finds it whole.
            String trusting = https + "&ca-bundle=" + front.caPem();
            Felix.Result pass = Felix.run(dir, c.env, TIMEOUT, "offload", "--data-dir", edgeRoot.toString(), "--store",
                    trusting);
            c.soft.assertThat(pass.exit()).as("offload trusting the CA: " + pass.describe()).isZero();
            c.soft.assertThat(objects(server, bucket)).as("objects after the pass over HTTPS").isNotEmpty();
            c.expect(FelixOffload.OK, List.of("no anomalies"), "scrub", "--data-dir", edgeRoot.toString(), "--store",
                    trusting);
            // The MinIO client takes the same setting.
            String minio = "minio://" + bucket + "?endpoint=" + front.endpoint() + "&region=" + server.region()
                    + "&max-attempts=2";
            c.expect(FelixOffload.IO, untrusted, "scrub", "--data-dir", edgeRoot.toString(), "--store", minio);
            c.expect(FelixOffload.OK, List.of("no anomalies"), "scrub", "--data-dir", edgeRoot.toString(), "--store",
                    minio + "&ca-bundle=" + front.caPem());
        }
        c.done();
    }

    private static void copyAll(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (var files = Files.list(from)) {
            for (Path f : files.toList()) {
                if (Files.isRegularFile(f)) {
                    Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    /** The exit codes of the command's contract (FelixOffload's), spelled out: the suite runs the jar, not its classes. */
    private static final class FelixOffload {
        static final int OK = 0;
        static final int CORRUPT = 1;
        static final int USAGE = 2;
        static final int IO = 3;
    }
}
