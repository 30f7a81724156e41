package dev.felix.offload.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /shards} a page at a time: pages follow each other by {@code next_after} without a gap or
 * a repeat, a page reads only its own shards' manifests, and bad paging parameters get a 400 that
 * says what is accepted.
 */
class ShardsPagingTest {

    private static final int SHARDS = 25;
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private Daemon daemon;
    private final List<String> names = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        for (int i = 0; i < SHARDS; i++) {
            String name = String.format("acme_default_s%03d_0-0d3aed4b998d27%02d", i, i);
            names.add(name);
            Path dir = Files.createDirectories(root.resolve(name));
            String key = "node-1/" + name + "/" + String.format("%020d-%020d.segment", 0, 0);
            ManifestEntry e = new ManifestEntry(0, 0, 9, 1000, 1_700_000_000_000_000L, 1_700_000_000_000_009L, 7, key);
            // the store holds what the manifests name, so the daemon takes it for this root's store
            Path object = tmp.resolve("store").resolve(key);
            Files.createDirectories(object.getParent());
            Files.write(object, new byte[1000]);
            Files.write(ManifestStore.fileIn(dir), ManifestCodec.encode(Manifest.of(List.of(e))));
        }
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", Files.createDirectories(tmp.resolve("store")).toUri().toString());
        values.put("node-id", "node-1");
        values.put("http.port", "0");
        values.put("offload.schedule", "off");
        values.put("retention.schedule", "off");
        values.put("scrub.schedule", "off");
        daemon = new Daemon(DaemonConfig.of(tmp.resolve("felix.yaml"), values),
                FilesystemStore.open(tmp.resolve("store")), Map.of(), PassClock.system(ZoneOffset.UTC));
        daemon.start();
        // The daemon surveys the whole root once as it starts, on a thread of its own. Its decodes share
        // the process-wide count a page is judged by, so the pages wait for it to end (the manifests are
        // still within the cache's racy window then, and each page decodes its own shards again).
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (daemon.surveysTaken() < 1 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(daemon.surveysTaken()).as("the start-up survey ended").isEqualTo(1);
    }

    @AfterEach
    void stop() {
        if (daemon != null) {
            daemon.stop(Duration.ofSeconds(10));
        }
    }

    private HttpResponse<String> get(String pathAndQuery) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + daemon.httpPort() + pathAndQuery))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> dirs(JsonNode page) {
        List<String> out = new ArrayList<>();
        page.get("shards").forEach(s -> out.add(s.get("dir").asText()));
        return out;
    }

    @Test
    void pagesFollowEachOtherWithoutGapOrRepeatAndReadOnlyTheirOwnShards() throws Exception {
        List<String> seen = new ArrayList<>();
        String after = null;
        int pages = 0;
        do {
            long decodesBefore = ManifestStore.decodes();
            HttpResponse<String> r = get("/shards?limit=10" + (after == null ? "" : "&after=" + after));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(ManifestStore.decodes() - decodesBefore).as("manifests a page of 10 reads").isLessThanOrEqualTo(10);
            JsonNode page = JSON.readTree(r.body());
            List<String> dirs = dirs(page);
            assertThat(dirs).hasSizeLessThanOrEqualTo(10).isNotEmpty();
            seen.addAll(dirs);
            after = page.get("next_after").isNull() ? null : page.get("next_after").asText();
            if (after != null) {
                assertThat(after).isEqualTo(dirs.get(dirs.size() - 1));
            }
            pages++;
        } while (after != null && pages < 10);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).as("every shard once, by name").isEqualTo(names);

        JsonNode whole = JSON.readTree(get("/shards").body());
        assertThat(dirs(whole)).as("a node under the default page size: one page").isEqualTo(names);
        assertThat(whole.get("next_after").isNull()).isTrue();
        assertThat(whole.get("shards").get(0).get("remote_segments").asInt()).isEqualTo(1);

        JsonNode last = JSON.readTree(get("/shards?after=" + names.get(SHARDS - 1)).body());
        assertThat(dirs(last)).as("after the last shard").isEmpty();
        assertThat(last.get("next_after").isNull()).isTrue();
    }

    @Test
    void badPagingParametersAre400sNamingWhatIsAccepted() throws Exception {
        for (String query : List.of("limit=0", "limit=10001", "limit=ten", "limit=-1", "limit=", "page=2")) {
            HttpResponse<String> r = get("/shards?" + query);
            assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(400);
            assertThat(r.body()).as(query).contains("/shards?limit=N&after=SHARD").contains("10000");
        }
        assertThat(get("/shards?limit=10000").statusCode()).isEqualTo(200);
    }
}
